#include "extract/image/engine.h"

#include "util/strings.h"

namespace fbkit::extract::image {

namespace {

struct Ran {
  sandbox::ExitInfo exit;
  std::string log;
};

util::Expected<Ran> RunLogged(util::Env& env, sandbox::Launcher& launcher,
                              std::vector<std::string> argv, const std::string& log_path,
                              double timeout) {
  sandbox::ProcessSpec spec;
  spec.argv = std::move(argv);
  spec.log_path = log_path;
  if (auto s = env.MakeDirs(util::DirName(log_path)); !s.ok()) return s.failure();
  auto exit = sandbox::RunToCompletion(launcher, spec, timeout);
  if (!exit.ok()) return util::Error{spec.argv[0] + ": " + exit.error()};
  auto log = env.ReadTail(log_path, 1 << 20);
  return Ran{*exit, log.ok() ? *log : ""};
}

bool SaysMissing(const std::string& log) {
  for (const char* s : {"No such image", "image not known", "no such image", "not found"}) {
    if (log.find(s) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

std::string FailedStep(const std::string& log) {
  std::string last;
  for (const auto& line : util::Split(log, '\n')) {
    if (line.starts_with("STEP ") || line.starts_with("Step ") || line.starts_with("#")) {
      if (line.starts_with("#") && line.find("RUN ") == std::string::npos &&
          line.find("FROM ") == std::string::npos && line.find("ADD ") == std::string::npos &&
          line.find("COPY ") == std::string::npos) {
        continue;  // BuildKit's progress lines that name no step
      }
      last = line;
    }
  }
  return last;
}

util::Status CheckEngine(util::Env& env, sandbox::Launcher& launcher, const std::string& program,
                         const std::string& log_path) {
  auto ran = RunLogged(env, launcher, {program, "info"}, log_path, 120);
  if (!ran.ok()) return ran.failure();
  if (ran->exit.code == 0) return util::Status::Ok();
  std::string hint = program == "podman"
                         ? " (podman as root; on cgroups v1 hosts set runtime = \"runc\", "
                           "cgroup_manager = \"cgroupfs\" and events_logger = \"file\" in "
                           "/etc/containers/containers.conf: docs/containers.md)"
                         : " (is the docker daemon running, and may this user reach its socket?)";
  if (ran->exit.code == 127) return util::Error{"'" + program + "' is not installed"};
  return util::Error{"'" + program + " info' failed (exit " + std::to_string(ran->exit.code) + ")" +
                     hint + ":\n" + util::Tail(ran->log, 1500)};
}

util::Expected<bool> CliEngine::Has(const std::string& tag) {
  std::string path = util::JoinPath(log_dir_, "inspect.log");
  auto ran = RunLogged(env_, launcher_, {program_, "image", "inspect", "--format", "{{.Id}}", tag},
                       path, 120);
  (void)env_.RemoveAll(path);
  if (!ran.ok()) return ran.failure();
  if (ran->exit.code == 0) return true;
  if (SaysMissing(ran->log)) return false;
  return util::Error{program_ + " image inspect " + tag + " failed (exit " +
                     std::to_string(ran->exit.code) + "): " + util::Tail(ran->log, 800)};
}

util::Status CliEngine::Build(const Recipe& recipe, const std::string& log_path) {
  std::vector<std::string> argv = {program_, "build", "-t", recipe.tag,
                                   recipe.network ? "--network=host" : "--network=none"};
  argv.push_back(recipe.dir);
  auto ran = RunLogged(env_, launcher_, argv, log_path, timeout_);
  if (!ran.ok()) return ran.failure();
  if (ran->exit.code == 0 && !ran->exit.timed_out) return util::Status::Ok();
  std::string step = FailedStep(ran->log);
  std::string how = ran->exit.timed_out ? "timed out after " + std::to_string(int(timeout_)) + " s"
                                        : "failed (exit " + std::to_string(ran->exit.code) + ")";
  return util::Error{"building " + recipe.tag + " " + how + (step.empty() ? "" : " at " + step) +
                     " (log: " + log_path + "):\n" + util::Tail(ran->log, 2000)};
}

}  // namespace fbkit::extract::image
