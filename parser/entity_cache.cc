#include "parser/entity_cache.h"

#include <charconv>
#include <sstream>

#include "util/hash.h"

namespace fbkit::parser {
namespace {

// Bump when the parser's output changes: old records then simply stop matching.
constexpr std::string_view kCacheVersion = "fbkit-entities-7 tree-sitter-python-0.23.6";
constexpr int64_t kRacyWindowNs = 2'000'000'000;

template <typename T>
bool ParseNumber(std::string_view s, T* out) {
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && ptr == s.data() + s.size();
}

std::vector<std::string_view> Split(std::string_view line, char sep, size_t max_fields) {
  std::vector<std::string_view> fields;
  while (fields.size() + 1 < max_fields) {
    size_t p = line.find(sep);
    if (p == std::string_view::npos) break;
    fields.push_back(line.substr(0, p));
    line.remove_prefix(p + 1);
  }
  fields.push_back(line);
  return fields;
}

}  // namespace

EntityCache::EntityCache(util::Env& env, std::string dir, const std::string& root)
    : env_(env), dir_(std::move(dir)) {
  manifest_path_ = util::JoinPath(dir_, "v1/manifests/" + util::Sha256Hex(root));
}

std::string EntityCache::Key(const std::string& path, const std::string& module,
                             const std::string& sha) {
  std::string material(kCacheVersion);
  material += '\0' + path + '\0' + module + '\0' + sha;
  return util::Sha256Hex(material);
}

std::string EntityCache::RecordPath(const std::string& key) const {
  return util::JoinPath(dir_, "v1/files/" + key.substr(0, 2) + "/" + key.substr(2));
}

void EntityCache::LoadManifest() {
  auto data = env_.ReadFile(manifest_path_);
  if (!data.ok()) return;
  std::string_view text = *data;
  size_t nl = text.find('\n');
  auto header = Split(text.substr(0, nl), ' ', 3);
  if (header.size() != 3 || header[0] != "fbkit-manifest" || header[1] != "1" ||
      !ParseNumber(header[2], &manifest_written_ns_)) {
    return;
  }
  text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
  while (!text.empty()) {
    nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    auto f = Split(line, '\t', 6);
    StatEntry e;
    if (f.size() != 6 || !ParseNumber(f[0], &e.size) || !ParseNumber(f[1], &e.mtime_ns) ||
        !ParseNumber(f[2], &e.ctime_ns) || !ParseNumber(f[3], &e.inode) || f[4].size() != 64) {
      known_.clear();  // corrupt: trust nothing
      return;
    }
    e.sha = std::string(f[4]);
    known_[std::string(f[5])] = std::move(e);
  }
}

std::optional<std::string> EntityCache::KnownSha(const std::string& rel_path,
                                                 const util::FileInfo& info) const {
  auto it = known_.find(rel_path);
  if (it == known_.end()) return std::nullopt;
  const StatEntry& e = it->second;
  if (e.size != info.size || e.mtime_ns != info.mtime_ns || e.ctime_ns != info.ctime_ns ||
      e.inode != info.inode || info.mtime_ns + kRacyWindowNs > manifest_written_ns_) {
    return std::nullopt;
  }
  return e.sha;
}

void EntityCache::Reserve(size_t files) { next_.assign(files, {}); }

void EntityCache::Remember(size_t slot, const std::string& rel_path, const util::FileInfo& info,
                           const std::string& sha) {
  next_[slot] = {rel_path, StatEntry{info.size, info.mtime_ns, info.ctime_ns, info.inode, sha}};
}

util::Status EntityCache::SaveManifest() {
  std::string out = "fbkit-manifest 1 " + std::to_string(env_.NowNs()) + "\n";
  for (const auto& [path, e] : next_) {
    if (path.empty() || path.find('\n') != std::string::npos) continue;
    out += std::to_string(e.size) + '\t' + std::to_string(e.mtime_ns) + '\t' +
           std::to_string(e.ctime_ns) + '\t' + std::to_string(e.inode) + '\t' + e.sha + '\t' +
           path + '\n';
  }
  util::Status s = env_.MakeDirs(util::DirName(manifest_path_));
  if (!s.ok()) return s;
  return env_.WriteFileAtomic(manifest_path_, out);
}

// Record layout: "<n>\n", n lines "line\tcolumn\tmessage", then the fragment.
std::optional<CachedFile> EntityCache::Load(const std::string& key) {
  auto data = env_.ReadFile(RecordPath(key));
  if (!data.ok()) return std::nullopt;
  std::string_view text = *data;
  size_t nl = text.find('\n');
  size_t count = 0;
  if (nl == std::string_view::npos || !ParseNumber(text.substr(0, nl), &count)) return std::nullopt;
  text.remove_prefix(nl + 1);
  CachedFile file;
  for (size_t i = 0; i < count; ++i) {
    nl = text.find('\n');
    if (nl == std::string_view::npos) return std::nullopt;
    auto f = Split(text.substr(0, nl), '\t', 3);
    ParseError e;
    if (f.size() != 3 || !ParseNumber(f[0], &e.line) || !ParseNumber(f[1], &e.column)) {
      return std::nullopt;
    }
    e.message = std::string(f[2]);
    file.parse_errors.push_back(std::move(e));
    text.remove_prefix(nl + 1);
  }
  if (text.size() < 2 || text.front() != '{' || text.back() != '}') return std::nullopt;
  file.fragment = std::string(text);
  return file;
}

util::Status EntityCache::Store(const std::string& key, const CachedFile& file) {
  std::string out = std::to_string(file.parse_errors.size()) + "\n";
  for (const auto& e : file.parse_errors) {
    std::string message = e.message;
    for (char& c : message) {
      if (c == '\n' || c == '\r') c = ' ';
    }
    out += std::to_string(e.line) + '\t' + std::to_string(e.column) + '\t' + message + '\n';
  }
  out += file.fragment;
  std::string path = RecordPath(key);
  util::Status s = env_.MakeDirs(util::DirName(path));
  if (!s.ok()) return s;
  return env_.WriteFileAtomic(path, out);
}

}  // namespace fbkit::parser
