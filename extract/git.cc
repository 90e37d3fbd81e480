#include "extract/git.h"

#include <unistd.h>

namespace fbkit::extract {

util::Expected<std::string> Git::Run(const std::string& cwd, const std::vector<std::string>& args) {
  tracer::ProcessSpec spec;
  spec.argv = {"git",
               "-c",
               "core.hooksPath=/dev/null",
               "-c",
               "commit.gpgsign=false",
               "-c",
               "core.autocrlf=false",
               "-c",
               "core.safecrlf=false",
               "-c",
               "core.quotepath=false",
               "-c",
               "init.defaultBranch=main"};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.cwd = cwd;
  spec.env = {{"GIT_AUTHOR_NAME", "fbkit"},
              {"GIT_AUTHOR_EMAIL", "fbkit@localhost"},
              {"GIT_AUTHOR_DATE", "2000-01-01T00:00:00Z"},
              {"GIT_COMMITTER_NAME", "fbkit"},
              {"GIT_COMMITTER_EMAIL", "fbkit@localhost"},
              {"GIT_COMMITTER_DATE", "2000-01-01T00:00:00Z"},
              {"GIT_CONFIG_NOSYSTEM", "1"},
              {"GIT_TERMINAL_PROMPT", "0"},
              {"LC_ALL", "C"}};
  spec.log_path = util::JoinPath(
      scratch_, "git-" + std::to_string(::getpid()) + "-" + std::to_string(counter_++) + ".log");
  auto exit = tracer::RunToCompletion(launcher_, spec);
  if (!exit.ok()) return util::Error{"git: " + exit.error()};
  auto out = env_.ReadFile(spec.log_path);
  (void)env_.RemoveAll(spec.log_path);
  std::string text = out.ok() ? *out : "";
  if (exit->code != 0) {
    std::string cmd = "git";
    for (const auto& a : args) cmd += " " + a;
    if (text.size() > 2000) text = "..." + text.substr(text.size() - 2000);
    return util::Error{cmd + " failed in " + cwd + ": " + text};
  }
  return text;
}

}  // namespace fbkit::extract
