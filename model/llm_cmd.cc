#include "model/llm_cmd.h"

#include <unistd.h>

#include <atomic>

#include "util/strings.h"

namespace fbkit::model {

util::Expected<std::string> RunLlmCommand(util::Env& env, sandbox::Launcher& launcher,
                                          const std::string& cmd, const std::string& request,
                                          const std::string& work_dir) {
  static std::atomic<int> counter{0};
  if (auto s = env.MakeDirs(work_dir); !s.ok()) return s.failure();
  std::string base = util::JoinPath(
      work_dir, "llm-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
  if (auto s = env.WriteFileAtomic(base + ".request.json", request); !s.ok()) {
    return s.failure();
  }
  sandbox::ProcessSpec spec;
  spec.argv = {"/bin/sh", "-c",
               "(" + cmd + ") < " + util::ShellQuote(base + ".request.json") + " > " +
                   util::ShellQuote(base + ".answer.json")};
  spec.log_path = base + ".log";
  auto exit = sandbox::RunToCompletion(launcher, spec);
  auto answer = env.ReadFile(base + ".answer.json");
  auto log = env.ReadFile(base + ".log");
  for (const char* ext : {".request.json", ".answer.json", ".log"}) (void)env.RemoveAll(base + ext);
  if (!exit.ok()) return util::Error{"--llm-cmd: " + exit.error()};
  if (exit->code != 0) {
    return util::Error{"--llm-cmd exited with " + std::to_string(exit->code) + ": " +
                       (log.ok() ? log->substr(0, 500) : "")};
  }
  if (!answer.ok()) return util::Error{"--llm-cmd: " + answer.error()};
  return *answer;
}

}  // namespace fbkit::model
