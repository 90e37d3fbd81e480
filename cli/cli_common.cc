#include "cli/cli_common.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>

#include "sandbox/process.h"
#include "tracer/run_trace.h"

namespace fbkit::cli {

runner::TestRunner& AgentTests() {
  static tracer::AgentTestRunner tests(util::RealEnv(), sandbox::RealLauncher());
  return tests;
}

runner::Services RealServices() { return {util::RealEnv(), sandbox::RealLauncher(), AgentTests()}; }

Progress::Progress(std::string label, bool enabled)
    : label_(std::move(label)), enabled_(enabled && ::isatty(STDERR_FILENO)) {}

Progress::~Progress() { Clear(); }

void Progress::Clear() {
  if (shown_) std::fputs("\r\033[K", stderr);
  shown_ = false;
}

void Progress::Update(size_t done, size_t total) {
  if (!enabled_) return;
  auto now = std::chrono::steady_clock::now();
  if (shown_ && done != total && now - last_ < std::chrono::milliseconds(100)) return;
  last_ = now;
  shown_ = true;
  double elapsed = std::chrono::duration<double>(now - start_).count();
  std::fprintf(stderr, "\r\033[K%s %zu/%zu, %.0f s", label_.c_str(), done, total, elapsed);
  std::fflush(stderr);
}

int RunMain(CLI::App& app, int argc, char** argv, const char* name, const int& exit_code) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : kExitUsage;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: fatal: %s\n", name, e.what());
    return kExitFailure;
  }
  return exit_code;
}

CLI::Option* AddExposedCopies(CLI::App* cmd, std::optional<sandbox::CopyPolicy>* value,
                              const std::string& view) {
  const std::string help =
      "A copy of the task's packages " + view + " would show outside the work copy (a vendored "
      "copy, a Debian python3-<library>, another interpreter's site-packages): refuse the "
      "instance (an error naming it), hide each copy, or allow them; default: the task's spec "
      "(refuse)";
  return cmd->add_option("--exposed-copies", help)
      ->type_name("TEXT")
      ->check(CLI::IsMember({"refuse", "hide", "allow"}))
      ->each([value](const std::string& word) { *value = *sandbox::ParseCopyPolicy(word); });
}

int Fail(const std::string& who, const std::string& message) {
  std::fprintf(stderr, "%s: %s\n", who.c_str(), message.c_str());
  return kExitFailure;
}

std::optional<std::string> UserCacheDir(const std::string& sub) {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) {
    return util::JoinPath(util::JoinPath(xdg, "fbkit"), sub);
  }
  if (const char* home = std::getenv("HOME"); home && *home) {
    return util::JoinPath(util::JoinPath(home, ".cache/fbkit"), sub);
  }
  return std::nullopt;
}

util::Expected<std::string> MakeScratchDir(const std::string& what) {
  const char* tmp = std::getenv("TMPDIR");
  std::string tmpl = util::JoinPath(tmp && *tmp ? tmp : "/tmp", "fbkit-" + what + "-XXXXXX");
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (::mkdtemp(buf.data()) == nullptr) return util::Error{"cannot create " + tmpl};
  return util::RealEnv().RealPath(buf.data());  // absolute, even under a relative $TMPDIR
}

namespace {

util::Status WriteStream(const std::string& path, std::string_view data) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) return util::Error{path + ": cannot open for writing"};
  bool ok = std::fwrite(data.data(), 1, data.size(), f) == data.size();
  ok = std::fclose(f) == 0 && ok;
  return ok ? util::Status::Ok() : util::Status(util::Error{path + ": cannot write"});
}

}  // namespace

util::Status WriteOutput(util::Env& env, const std::string& path, std::string_view data) {
  if (path != "-") {
    std::string dir = util::DirName(path);
    if (!dir.empty()) {
      util::Status s = env.MakeDirs(dir);
      if (!s.ok()) return s;
    }
    // A device or a pipe (-o /dev/null, a FIFO) is written as it is: an atomic write
    // would rename a regular file over it.
    if (auto st = env.Stat(path, true); st.ok() && st->type != util::FileType::kRegular &&
                                        st->type != util::FileType::kDirectory) {
      return WriteStream(path, data);
    }
    return env.WriteFileAtomic(path, data);
  }
  if (std::fwrite(data.data(), 1, data.size(), stdout) != data.size() || std::fflush(stdout) != 0) {
    return util::Error{"cannot write to standard output"};
  }
  return util::Status::Ok();
}


}  // namespace fbkit::cli
