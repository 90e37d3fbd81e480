#include "parser/entity_cache.h"

#include <algorithm>
#include <charconv>

#include "util/hash.h"

namespace fbkit::parser {
namespace {

// Bump when the parser's output changes: old records then simply stop matching.
constexpr std::string_view kCacheVersion = "fbkit-entities-12 tree-sitter-python-0.23.6";
constexpr std::string_view kPackMagic = "fbkit-entities-pack 1";
constexpr int64_t kRacyWindowNs = 2'000'000'000;

template <typename T>
bool ParseNumber(std::string_view s, T* out) {
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && ptr == s.data() + s.size();
}

// At most `max_fields` fields of `line` (the last one keeps the rest), as views into it.
std::vector<std::string_view> Fields(std::string_view line, char sep, size_t max_fields) {
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

// Takes the next '\n'-terminated line off `text`.
bool NextLine(std::string_view* text, std::string_view* line) {
  size_t nl = text->find('\n');
  if (nl == std::string_view::npos) return false;
  *line = text->substr(0, nl);
  text->remove_prefix(nl + 1);
  return true;
}

std::string OneLine(std::string s) {
  for (char& c : s) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return s;
}

}  // namespace

EntityCache::EntityCache(util::Env& env, std::string dir, const std::string& root, size_t files,
                         std::string variant)
    : env_(env), variant_(std::move(variant)), next_(files), unchanged_(files, 0) {
  pack_path_ = util::JoinPath(dir, "v2/" + util::Sha256Hex(root + '\0' + variant_) + ".pack");
}

std::string EntityCache::Key(const std::string& path, const std::string& module,
                             const std::string& sha) const {
  std::string material(kCacheVersion);
  material += '\0' + variant_ + '\0' + path + '\0' + module + '\0' + sha;
  return util::Sha256Hex(material);
}

void EntityCache::Open() {
  auto data = env_.ReadFile(pack_path_);
  if (!data.ok()) return;
  pack_ = std::make_shared<const std::string>(std::move(*data));
  if (!Parse(*pack_)) {
    old_.clear();
    return;
  }
  for (size_t i = 0; i < old_.size(); ++i) {
    by_path_[old_[i].path] = i;
    by_key_[old_[i].key] = i;
  }
}

// Pack layout: "<magic> <written_ns>\n", then per file a line
// "size\tmtime\tctime\tinode\tsha\tkey\terrors\tbytes\tpath\n", `errors` lines
// "line\tcolumn\tmessage\n" and `bytes` bytes of fragment followed by "\n".
bool EntityCache::Parse(std::string_view text) {
  std::string_view line;
  if (!NextLine(&text, &line)) return false;
  auto header = Fields(line, ' ', 3);
  if (header.size() != 3 || std::string(header[0]) + " " + std::string(header[1]) != kPackMagic ||
      !ParseNumber(header[2], &written_ns_)) {
    return false;
  }
  while (!text.empty()) {
    if (!NextLine(&text, &line)) return false;
    auto f = Fields(line, '\t', 9);
    Record r;
    size_t errors = 0, bytes = 0;
    if (f.size() != 9 || !ParseNumber(f[0], &r.size) || !ParseNumber(f[1], &r.mtime_ns) ||
        !ParseNumber(f[2], &r.ctime_ns) || !ParseNumber(f[3], &r.inode) ||
        !ParseNumber(f[6], &errors) || !ParseNumber(f[7], &bytes)) {
      return false;
    }
    r.sha = std::string(f[4]);
    r.key = std::string(f[5]);
    r.path = std::string(f[8]);
    for (size_t i = 0; i < errors; ++i) {
      if (!NextLine(&text, &line)) return false;
      auto e = Fields(line, '\t', 3);
      ParseError pe;
      if (e.size() != 3 || !ParseNumber(e[0], &pe.line) || !ParseNumber(e[1], &pe.column)) {
        return false;
      }
      pe.message = std::string(e[2]);
      r.file.parse_errors.push_back(std::move(pe));
    }
    if (text.size() < bytes + 1 || text[bytes] != '\n') return false;
    r.file.fragment = text.substr(0, bytes);
    text.remove_prefix(bytes + 1);
    old_.push_back(std::move(r));
  }
  return true;
}

const CachedFile* EntityCache::LookupByStat(const std::string& path, const std::string& module,
                                            const util::FileInfo& info, std::string* sha) const {
  auto it = by_path_.find(path);
  if (it == by_path_.end()) return nullptr;
  const Record& r = old_[it->second];
  if (r.size != info.size || r.mtime_ns != info.mtime_ns || r.ctime_ns != info.ctime_ns ||
      r.inode != info.inode || info.mtime_ns + kRacyWindowNs > written_ns_ ||
      r.key != Key(path, module, r.sha)) {
    return nullptr;
  }
  *sha = r.sha;
  return &r.file;
}

const CachedFile* EntityCache::LookupByKey(const std::string& key) const {
  auto it = by_key_.find(key);
  return it == by_key_.end() ? nullptr : &old_[it->second].file;
}

void EntityCache::Put(size_t slot, const std::string& path, const util::FileInfo& info,
                      const std::string& sha, const std::string& key, const CachedFile& file,
                      bool unchanged) {
  next_[slot] = Record{info.size, info.mtime_ns, info.ctime_ns, info.inode, sha, key, path, file};
  unchanged_[slot] = unchanged;
}

util::Status EntityCache::Save() {
  bool all_unchanged = next_.size() == old_.size() &&
                       std::all_of(unchanged_.begin(), unchanged_.end(), [](char u) { return u; });
  if (all_unchanged) return util::Status::Ok();
  size_t total = 64;
  for (const auto& r : next_) total += r.file.fragment.size() + r.path.size() + 200;
  std::string out;
  out.reserve(total);
  out += std::string(kPackMagic) + " " + std::to_string(env_.NowNs()) + "\n";
  for (const auto& r : next_) {
    if (r.path.empty() || r.path.find_first_of("\n\t") != std::string::npos) continue;
    out += std::to_string(r.size) + '\t' + std::to_string(r.mtime_ns) + '\t' +
           std::to_string(r.ctime_ns) + '\t' + std::to_string(r.inode) + '\t' + r.sha + '\t' +
           r.key + '\t' + std::to_string(r.file.parse_errors.size()) + '\t' +
           std::to_string(r.file.fragment.size()) + '\t' + r.path + '\n';
    for (const auto& e : r.file.parse_errors) {
      out += std::to_string(e.line) + '\t' + std::to_string(e.column) + '\t' +
             OneLine(e.message) + '\n';
    }
    out += r.file.fragment;
    out += '\n';
  }
  util::Status s = env_.MakeDirs(util::DirName(pack_path_));
  if (!s.ok()) return s;
  return env_.WriteFileAtomic(pack_path_, out);
}

}  // namespace fbkit::parser
