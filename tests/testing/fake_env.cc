#include "tests/testing/fake_env.h"

#include "util/strings.h"

namespace fbkit::testing {

void FakeEnv::AddDir(const std::string& path) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  if (path.empty() || path == "/") return;
  AddDir(util::DirName(path));
  Node& n = nodes_[path];
  n.type = util::FileType::kDirectory;
}

void FakeEnv::AddFile(const std::string& path, const std::string& data) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  AddDir(util::DirName(path));
  Node& n = nodes_[path];
  n.type = util::FileType::kRegular;
  n.data = data;
  n.mtime_ns = now_ns_;
  n.inode = next_inode_++;
}

void FakeEnv::AddSymlink(const std::string& path, const std::string& target) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  AddDir(util::DirName(path));
  Node& n = nodes_[path];
  n.type = util::FileType::kSymlink;
  n.data = target;
}

int FakeEnv::reads(const std::string& path) const {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  auto it = reads_.find(path);
  return it == reads_.end() ? 0 : it->second;
}

namespace {

// "/a/b/../c/./d" -> "/a/c/d" (text only: the fake's links are on last components).
std::string Lexical(const std::string& path) {
  std::vector<std::string> parts;
  for (const auto& p : util::Split(path, '/')) {
    if (p.empty() || p == ".") continue;
    if (p == "..") {
      if (!parts.empty()) parts.pop_back();
      continue;
    }
    parts.push_back(p);
  }
  std::string out;
  for (const auto& p : parts) out += "/" + p;
  return out.empty() ? "/" : out;
}

}  // namespace

const FakeEnv::Node* FakeEnv::Resolve(const std::string& path, bool follow,
                                      std::string* resolved) const {
  std::string at = path;
  auto it = nodes_.find(at);
  for (int hops = 0; it != nodes_.end() && follow && hops < 8; ++hops) {
    if (it->second.type != util::FileType::kSymlink) break;
    const std::string& target = it->second.data;
    at = target.front() == '/' ? target : Lexical(util::JoinPath(util::DirName(at), target));
    it = nodes_.find(at);
  }
  if (resolved) *resolved = at;
  return it == nodes_.end() ? nullptr : &it->second;
}

util::Expected<std::string> FakeEnv::ReadFile(const std::string& path) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  const Node* n = Resolve(path, true);
  if (n == nullptr) return util::Error{path + ": cannot open: No such file or directory"};
  if (n->type != util::FileType::kRegular) return util::Error{path + ": is a directory"};
  ++reads_[path];
  return n->data;
}

util::Expected<std::string> FakeEnv::ReadUntrusted(const std::string& base,
                                                   const std::string& rel, uint64_t max_bytes) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  std::string path = util::JoinPath(base, rel);
  // As the real one: no component of `rel` may be a link (the fake's links are whole paths).
  std::string at = base;
  for (const auto& part : util::Split(rel, '/')) {
    at = util::JoinPath(at, part);
    const Node* n = Resolve(at, false);
    if (n != nullptr && n->type == util::FileType::kSymlink) {
      return util::Error{path + ": cannot open (symlinks are not followed here)"};
    }
  }
  const Node* n = Resolve(path, false);
  if (n == nullptr) return util::Error{path + ": cannot open: No such file or directory"};
  if (n->type != util::FileType::kRegular) return util::Error{path + ": not a regular file"};
  if (n->data.size() > max_bytes) {
    return util::Error{path + ": larger than " + std::to_string(max_bytes) + " bytes"};
  }
  ++reads_[path];
  return n->data;
}

util::Expected<std::string> FakeEnv::ReadFileFrom(const std::string& path, uint64_t offset) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  auto all = ReadFile(path);
  if (!all.ok()) return all;
  return offset >= all->size() ? std::string() : all->substr(offset);
}

util::Status FakeEnv::AppendFile(const std::string& path, std::string_view data) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  auto it = nodes_.find(path);
  if (it == nodes_.end() || it->second.type != util::FileType::kRegular) {
    return util::Error{path + ": cannot open to append: No such file"};
  }
  it->second.data.append(data);
  it->second.mtime_ns = now_ns_;
  return util::Status::Ok();
}

util::Status FakeEnv::WriteFileAtomic(const std::string& path, std::string_view data) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  const Node* dir = Resolve(util::DirName(path), true);
  if (dir == nullptr || dir->type != util::FileType::kDirectory) {
    return util::Error{path + ": cannot create: No such file or directory"};
  }
  AddFile(path, std::string(data));
  return util::Status::Ok();
}

util::Expected<util::FileInfo> FakeEnv::Stat(const std::string& path, bool follow_symlinks) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  const Node* n = Resolve(path, follow_symlinks);
  if (n == nullptr) return util::Error{path + ": cannot stat: No such file or directory"};
  util::FileInfo info;
  info.type = n->type;
  info.size = n->data.size();
  info.mtime_ns = info.ctime_ns = n->mtime_ns;
  info.inode = n->inode;
  info.mode = n->mode;
  return info;
}

util::Expected<std::vector<util::DirEntry>> FakeEnv::ListDir(const std::string& path) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  const Node* n = Resolve(path, true);
  if (n == nullptr || n->type != util::FileType::kDirectory) {
    return util::Error{path + ": cannot open directory: No such file or directory"};
  }
  std::vector<util::DirEntry> out;
  std::string prefix = path == "/" ? "/" : path + "/";
  for (auto it = nodes_.lower_bound(prefix); it != nodes_.end(); ++it) {
    if (it->first.compare(0, prefix.size(), prefix) != 0) break;
    std::string rest = it->first.substr(prefix.size());
    if (rest.empty() || rest.find('/') != std::string::npos) continue;
    out.push_back(util::DirEntry{rest, it->second.type});
  }
  return out;
}

util::Status FakeEnv::MakeDirs(const std::string& path) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  AddDir(path);
  return util::Status::Ok();
}

util::Status FakeEnv::RemoveAll(const std::string& path) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  for (auto it = nodes_.lower_bound(path); it != nodes_.end();) {
    if (it->first != path && !it->first.starts_with(path + "/")) break;
    it = nodes_.erase(it);
  }
  return util::Status::Ok();
}

util::Status FakeEnv::RemoveEmptyDir(const std::string& path) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  auto it = nodes_.find(path);
  if (it == nodes_.end() || it->second.type != util::FileType::kDirectory) {
    return util::Error{path + ": cannot remove the directory: not a directory"};
  }
  auto child = nodes_.lower_bound(path + "/");
  if (child != nodes_.end() && child->first.starts_with(path + "/")) {
    return util::Error{path + ": cannot remove the directory: Directory not empty"};
  }
  nodes_.erase(it);
  return util::Status::Ok();
}

util::Status FakeEnv::Rename(const std::string& from, const std::string& to) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  std::map<std::string, Node> moved;
  for (auto it = nodes_.lower_bound(from); it != nodes_.end();) {
    if (it->first != from && !it->first.starts_with(from + "/")) break;
    moved[to + it->first.substr(from.size())] = it->second;
    it = nodes_.erase(it);
  }
  if (moved.empty()) return util::Error{from + ": no such file"};
  for (auto& [k, v] : moved) nodes_[k] = std::move(v);
  return util::Status::Ok();
}

util::Expected<std::string> FakeEnv::RealPath(const std::string& path) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  std::string real;
  if (Resolve(path, true, &real) == nullptr) return util::Error{path + ": cannot resolve"};
  return real;
}

std::unique_ptr<util::HeldLock> FakeEnv::LockFile(const std::string&) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  ++locks_;
  return std::make_unique<util::HeldLock>();
}

util::Expected<std::string> FakeEnv::ReadLink(const std::string& path) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  const Node* n = Resolve(path, false);
  if (n == nullptr || n->type != util::FileType::kSymlink) {
    return util::Error{path + ": cannot read the link"};
  }
  return n->data;
}

util::Status FakeEnv::CopyFile(const std::string& from, const std::string& to) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  const Node* n = Resolve(from, false);
  if (n == nullptr) return util::Error{from + ": cannot stat: No such file or directory"};
  const Node* dir = Resolve(util::DirName(to), true);
  if (dir == nullptr || dir->type != util::FileType::kDirectory) {
    return util::Error{to + ": cannot create: No such file or directory"};
  }
  const Node* existing = Resolve(to, false);
  if (n->type == util::FileType::kSymlink) {
    if (existing != nullptr) return util::Error{to + ": cannot create the link: File exists"};
    AddSymlink(to, n->data);
    return util::Status::Ok();
  }
  if (n->type != util::FileType::kRegular) return util::Error{from + ": not a regular file"};
  if (existing != nullptr && existing->type != util::FileType::kRegular) {
    return util::Error{to + ": cannot create: not a regular file"};
  }
  Node copy = *n;
  AddFile(to, copy.data);
  nodes_[to].mode = copy.mode;
  return util::Status::Ok();
}

util::Status FakeEnv::CopyMode(const std::string& from, const std::string& to) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  const Node* n = Resolve(from, true);
  if (n == nullptr) return util::Error{from + ": cannot stat: No such file or directory"};
  uint32_t mode = n->mode;
  std::string target;
  if (Resolve(to, true, &target) == nullptr) return util::Error{to + ": cannot set the mode of"};
  nodes_[target].mode = mode;
  return util::Status::Ok();
}

void FakeEnv::SetMode(const std::string& path, uint32_t mode) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  nodes_.at(path).mode = mode;
}

}  // namespace fbkit::testing
