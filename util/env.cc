#include "util/env.h"

#include "util/file_lock.h"

#include <climits>
#include <cstdint>

#include <filesystem>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <chrono>
#include <cstring>
#include <random>

namespace fbkit::util {
namespace {

Error ErrnoError(const std::string& path, const char* what) {
  return Error{path + ": " + what + ": " + std::strerror(errno)};
}

FileType TypeOf(mode_t mode) {
  if (S_ISREG(mode)) return FileType::kRegular;
  if (S_ISDIR(mode)) return FileType::kDirectory;
  if (S_ISLNK(mode)) return FileType::kSymlink;
  return FileType::kOther;
}

// open(2) of `rel` below the directory `dirfd` with no symlink on the way (openat2 where
// the kernel has it, else one component at a time with O_NOFOLLOW).
int OpenBeneath(int dirfd, const std::string& rel) {
  constexpr int kFlags = O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY;
#ifdef SYS_openat2
  struct {
    uint64_t flags, mode, resolve;
  } how{kFlags, 0, 0x04 /*RESOLVE_NO_SYMLINKS*/ | 0x02 /*NO_MAGICLINKS*/ | 0x08 /*BENEATH*/};
  int fd = static_cast<int>(::syscall(SYS_openat2, dirfd, rel.c_str(), &how, sizeof how));
  if (fd >= 0 || errno != ENOSYS) return fd;
#endif
  int cur = ::dup(dirfd);
  size_t b = 0;
  while (cur >= 0) {
    size_t e = rel.find('/', b);
    std::string part = rel.substr(b, e == std::string::npos ? std::string::npos : e - b);
    if (part == "..") {
      ::close(cur);
      errno = EACCES;
      return -1;
    }
    bool last = e == std::string::npos;
    int next = part.empty() || part == "." ? ::dup(cur)
               : ::openat(cur, part.c_str(), (last ? kFlags : O_RDONLY | O_DIRECTORY | O_CLOEXEC) | O_NOFOLLOW);
    ::close(cur);
    cur = next;
    if (last) break;
    b = e + 1;
  }
  return cur;
}

// All of `in` written to `out` (the names for errors).
Status CopyBytes(int in, const std::string& from, int out, const std::string& to) {
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(in, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoError(from, "cannot read");
    if (n == 0) return Status::Ok();
    for (ssize_t done = 0; done < n;) {
      ssize_t w = ::write(out, buf + done, static_cast<size_t>(n - done));
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) return ErrnoError(to, "cannot write");
      done += w;
    }
  }
}

class PosixEnv : public Env {
 public:
  Expected<std::string> ReadUntrusted(const std::string& base, const std::string& rel,
                                      uint64_t max_bytes) override {
    std::string path = JoinPath(base, rel);
    int dir = ::open(base.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0) return ErrnoError(base, "cannot open");
    int fd = OpenBeneath(dir, rel);
    ::close(dir);
    if (fd < 0) return ErrnoError(path, "cannot open (symlinks are not followed here)");
    struct stat st;
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      ::close(fd);
      return Error{path + ": not a regular file"};
    }
    if (static_cast<uint64_t>(st.st_size) > max_bytes) {
      ::close(fd);
      return Error{path + ": larger than " + std::to_string(max_bytes) + " bytes"};
    }
    std::string data;
    char buf[1 << 16];
    while (data.size() <= max_bytes) {
      ssize_t n = ::read(fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      data.append(buf, static_cast<size_t>(n));
    }
    ::close(fd);
    if (data.size() > max_bytes) return Error{path + ": larger than " + std::to_string(max_bytes) + " bytes"};
    return data;
  }

  Expected<std::string> ReadFile(const std::string& path) override {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return ErrnoError(path, "cannot open");
    std::string data;
    struct stat st;
    if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
      ::close(fd);
      return Error{path + ": is a directory"};
    }
    if (st.st_size > 0) data.reserve(static_cast<size_t>(st.st_size));
    char buf[1 << 16];
    for (;;) {
      ssize_t n = ::read(fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        Error e = ErrnoError(path, "cannot read");
        ::close(fd);
        return e;
      }
      if (n == 0) break;
      data.append(buf, static_cast<size_t>(n));
    }
    ::close(fd);
    return data;
  }

  Expected<std::string> ReadFileFrom(const std::string& path, uint64_t offset) override {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return ErrnoError(path, "cannot open");
    std::string data;
    char buf[1 << 16];
    for (;;) {
      ssize_t n = ::pread(fd, buf, sizeof buf, static_cast<off_t>(offset + data.size()));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      data.append(buf, static_cast<size_t>(n));
    }
    ::close(fd);
    return data;
  }

  Status WriteFileAtomic(const std::string& path, std::string_view data) override {
    // A fresh file of an unpredictable name, never one found there: the directory may be
    // one sandboxed code could write (an environment's cache entry), where a link planted
    // under a guessable name would have fbkit write through it onto the host.
    thread_local std::mt19937_64 random{std::random_device{}()};
    std::string tmp;
    int fd = -1;
    for (int attempt = 0; attempt < 16 && fd < 0; ++attempt) {
      tmp = path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(random());
      fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
      if (fd < 0 && errno != EEXIST) break;
    }
    if (fd < 0) return ErrnoError(tmp, "cannot create");
    size_t done = 0;
    while (done < data.size()) {
      ssize_t n = ::write(fd, data.data() + done, data.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        Error e = ErrnoError(tmp, "cannot write");
        ::close(fd);
        ::unlink(tmp.c_str());
        return e;
      }
      done += static_cast<size_t>(n);
    }
    if (::close(fd) != 0) return ErrnoError(tmp, "cannot close");
    if (::rename(tmp.c_str(), path.c_str()) != 0) {
      Error e = ErrnoError(path, "cannot rename into place");
      ::unlink(tmp.c_str());
      return e;
    }
    return Status::Ok();
  }

  Status AppendFile(const std::string& path, std::string_view data) override {
    int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return ErrnoError(path, "cannot open to append");
    for (size_t done = 0; done < data.size();) {
      ssize_t n = ::write(fd, data.data() + done, data.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        Error e = ErrnoError(path, "cannot write");
        ::close(fd);
        return e;
      }
      done += static_cast<size_t>(n);
    }
    if (::close(fd) != 0) return ErrnoError(path, "cannot close");
    return Status::Ok();
  }

  Expected<FileInfo> Stat(const std::string& path, bool follow_symlinks) override {
    struct stat st;
    int rc = follow_symlinks ? ::stat(path.c_str(), &st) : ::lstat(path.c_str(), &st);
    if (rc != 0) return ErrnoError(path, "cannot stat");
    FileInfo info;
    info.type = TypeOf(st.st_mode);
    info.size = static_cast<uint64_t>(st.st_size);
    info.mtime_ns = int64_t{st.st_mtim.tv_sec} * 1000000000 + st.st_mtim.tv_nsec;
    info.ctime_ns = int64_t{st.st_ctim.tv_sec} * 1000000000 + st.st_ctim.tv_nsec;
    info.inode = st.st_ino;
    info.links = static_cast<uint64_t>(st.st_nlink);
    info.mode = st.st_mode & 07777;
    return info;
  }

  Expected<std::vector<DirEntry>> ListDir(const std::string& path) override {
    DIR* dir = ::opendir(path.c_str());
    if (dir == nullptr) return ErrnoError(path, "cannot open directory");
    std::vector<DirEntry> entries;
    while (struct dirent* d = ::readdir(dir)) {
      std::string name = d->d_name;
      if (name == "." || name == "..") continue;
      DirEntry entry{name, FileType::kOther};
      if (d->d_type == DT_REG) {
        entry.type = FileType::kRegular;
      } else if (d->d_type == DT_DIR) {
        entry.type = FileType::kDirectory;
      } else if (d->d_type == DT_LNK) {
        entry.type = FileType::kSymlink;
      } else {
        struct stat st;
        if (::lstat(JoinPath(path, name).c_str(), &st) == 0) entry.type = TypeOf(st.st_mode);
      }
      entries.push_back(std::move(entry));
    }
    ::closedir(dir);
    std::sort(entries.begin(), entries.end(),
              [](const DirEntry& a, const DirEntry& b) { return a.name < b.name; });
    return entries;
  }

  Status MakeDirs(const std::string& path) override {
    if (path.empty()) return Status::Ok();
    struct stat st;
    if (::stat(path.c_str(), &st) == 0) {
      if (S_ISDIR(st.st_mode)) return Status::Ok();
      return Error{path + ": exists and is not a directory"};
    }
    std::string parent = DirName(path);
    if (!parent.empty() && parent != path) {
      Status s = MakeDirs(parent);
      if (!s.ok()) return s;
    }
    if (::mkdir(path.c_str(), 0755) != 0 && errno != EEXIST) {
      return ErrnoError(path, "cannot create directory");
    }
    return Status::Ok();
  }

  Status RemoveAll(const std::string& path) override {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
    if (ec && ec == std::errc::permission_denied) {
      // Directories made unreadable or unwritable (by tests running as fbkit's user): their
      // owner's permissions back, through descriptors (no link followed), and again.
      int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (fd < 0 && errno == EACCES && ::chmod(path.c_str(), 0700) == 0) {
        fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      }
      if (fd >= 0) OpenUp(fd, 0);
      ec.clear();
      std::filesystem::remove_all(path, ec);
    }
    if (ec) return Error{path + ": cannot remove: " + ec.message()};
    return Status::Ok();
  }

  // Gives every directory below the open directory `fd` (itself included) u+rwx; closes fd.
  static void OpenUp(int fd, int depth) {
    (void)::fchmod(fd, 0700);
    DIR* dir = depth < 256 ? ::fdopendir(fd) : nullptr;
    if (!dir) {
      ::close(fd);
      return;
    }
    while (struct dirent* e = ::readdir(dir)) {
      std::string name = e->d_name;
      if (name == "." || name == "..") continue;
      struct stat st;
      if (::fstatat(::dirfd(dir), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode)) {
        continue;
      }
      // The directory itself, never a link: its permissions through its descriptor.
      int at = ::openat(::dirfd(dir), e->d_name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (at < 0) continue;
      (void)::chmod(("/proc/self/fd/" + std::to_string(at)).c_str(), 0700);
      int sub = ::openat(at, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      ::close(at);
      if (sub >= 0) OpenUp(sub, depth + 1);
    }
    ::closedir(dir);
  }

  Status RemoveEmptyDir(const std::string& path) override {
    if (::rmdir(path.c_str()) != 0) return ErrnoError(path, "cannot remove the directory");
    return Status::Ok();
  }

  Status Rename(const std::string& from, const std::string& to) override {
    if (std::rename(from.c_str(), to.c_str()) != 0) {
      return Error{from + ": cannot rename to " + to + ": " + std::strerror(errno)};
    }
    return Status::Ok();
  }

  Expected<std::string> RealPath(const std::string& path) override {
    char* resolved = ::realpath(path.c_str(), nullptr);
    if (resolved == nullptr) return ErrnoError(path, "cannot resolve");
    std::string out = resolved;
    ::free(resolved);
    return out;
  }

  std::unique_ptr<HeldLock> LockFile(const std::string& path) override {
    struct Held : HeldLock {
      explicit Held(const std::string& p) : lock(p) {}
      FileLock lock;
    };
    return std::make_unique<Held>(path);
  }

  Expected<std::string> ReadLink(const std::string& path) override {
    std::string target(PATH_MAX, '\0');
    ssize_t n = ::readlink(path.c_str(), target.data(), target.size());
    if (n < 0) return ErrnoError(path, "cannot read the link");
    target.resize(static_cast<size_t>(n));
    return target;
  }

  Status CopyFile(const std::string& from, const std::string& to) override {
    struct stat st;
    if (::lstat(from.c_str(), &st) != 0) return ErrnoError(from, "cannot stat");
    if (S_ISLNK(st.st_mode)) {
      auto target = ReadLink(from);
      if (!target.ok()) return target.failure();
      if (::symlink(target->c_str(), to.c_str()) != 0) return ErrnoError(to, "cannot create the link");
      return Status::Ok();
    }
    // Non-blocking, so a FIFO put where a file was listed cannot hang the open.
    int in = ::open(from.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (in < 0) return ErrnoError(from, "cannot open");
    if (::fstat(in, &st) != 0 || !S_ISREG(st.st_mode)) {
      ::close(in);
      return Error{from + ": not a regular file"};
    }
    int out = ::open(to.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (out < 0) {
      Error e = ErrnoError(to, "cannot create");
      ::close(in);
      return e;
    }
    Status s = CopyBytes(in, from, out, to);
    if (s.ok() && ::fchmod(out, st.st_mode & 07777) != 0) s = ErrnoError(to, "cannot set the mode of");
    ::close(in);
    if (::close(out) != 0 && s.ok()) s = ErrnoError(to, "cannot close");
    return s;
  }

  Status CopyMode(const std::string& from, const std::string& to) override {
    struct stat st;
    if (::stat(from.c_str(), &st) != 0) return ErrnoError(from, "cannot stat");
    if (::chmod(to.c_str(), st.st_mode & 07777) != 0) return ErrnoError(to, "cannot set the mode of");
    return Status::Ok();
  }

  int64_t NowNs() override {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  }
};

}  // namespace

Env& RealEnv() {
  static PosixEnv env;
  return env;
}

std::string JoinPath(std::string_view a, std::string_view b) {
  if (a.empty()) return std::string(b);
  if (b.empty()) return std::string(a);
  std::string out(a);
  if (out.back() != '/') out += '/';
  out += b;
  return out;
}

Status WriteFiles(Env& env, const std::string& dir,
                  const std::vector<std::pair<std::string, std::string>>& files) {
  if (auto s = env.MakeDirs(dir); !s.ok()) return Error{dir + ": " + s.error()};
  for (const auto& [name, content] : files) {
    std::string path = JoinPath(dir, name);
    if (auto s = env.WriteFileAtomic(path, content); !s.ok()) return Error{path + ": " + s.error()};
  }
  return Status::Ok();
}

bool IsUnder(std::string_view path, std::string_view dir) {
  if (!path.starts_with(dir)) return false;
  return path.size() == dir.size() || dir.ends_with('/') || path[dir.size()] == '/';
}

std::string DirName(std::string_view path) {
  size_t slash = path.rfind('/');
  if (slash == std::string_view::npos) return "";
  if (slash == 0) return "/";
  return std::string(path.substr(0, slash));
}

namespace {

// Depth first with a stack of its own (a tree an agent made 25,000 levels deep must not
// overflow fbkit's); with a bound on files, the entries looked at (directories too) are
// bounded as well, at ten times it (red team round 12: 50,000 empty directories under
// each of 300 files' directories took 137 s).
Status Walk(Env& env, const std::string& root,
            const std::function<bool(const std::string&)>& name_ok, size_t max_files,
            std::vector<std::string>* out) {
  const size_t max_entries =
      max_files == SIZE_MAX ? SIZE_MAX : (max_files > SIZE_MAX / 10 ? SIZE_MAX : 10 * max_files);
  size_t seen = 0;
  std::vector<std::string> dirs = {root};
  while (!dirs.empty() && out->size() <= max_files) {
    std::string dir = std::move(dirs.back());
    dirs.pop_back();
    auto entries = env.ListDir(dir);
    if (!entries.ok()) return entries.failure();
    for (const auto& e : *entries) {
      if (out->size() > max_files) break;
      if (++seen > max_entries) {
        return Error{root + ": more than " + std::to_string(max_entries) + " entries"};
      }
      std::string path = JoinPath(dir, e.name);
      if (e.type == FileType::kDirectory) {
        dirs.push_back(std::move(path));
      } else if (e.type == FileType::kRegular && name_ok(e.name)) {
        out->push_back(std::move(path));
      }
    }
  }
  return {};
}

}  // namespace

namespace {

void WalkBelow(Env& env, const std::string& root, const std::string& dir,
               const std::function<bool(const std::string&, FileType)>& visit) {
  auto entries = env.ListDir(dir.empty() ? root : JoinPath(root, dir));
  if (!entries.ok()) return;
  for (const auto& e : *entries) {
    std::string rel = dir.empty() ? e.name : JoinPath(dir, e.name);
    if (visit(rel, e.type) && e.type == FileType::kDirectory) WalkBelow(env, root, rel, visit);
  }
}

}  // namespace

void WalkTree(Env& env, const std::string& root,
              const std::function<bool(const std::string& rel, FileType type)>& visit) {
  WalkBelow(env, root, "", visit);
}

Expected<std::vector<std::string>> FilesUnder(
    Env& env, const std::string& path,
    const std::function<bool(const std::string&)>& name_ok, size_t max_files) {
  auto st = env.Stat(path, true);
  if (!st.ok()) return st.failure();
  std::vector<std::string> out;
  if (st->type != FileType::kDirectory) {
    out.push_back(path);
    return out;
  }
  if (auto s = Walk(env, path, name_ok, max_files, &out); !s.ok()) return s.failure();
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace fbkit::util
