// What shell commands open and edit (fb-race summarize), and mining's intent and issue rules.
#include "groundtruth/trajectory.h"

#include <gtest/gtest.h>

#include "groundtruth/mine.h"

namespace fbkit::groundtruth {
namespace {

using Paths = std::vector<std::string>;

ShellEffects Shell(const std::string& cmd, std::string cwd = "/testbed") {
  return AnalyzeShell(cmd, &cwd);
}

TEST(AnalyzeShell, ViewsAndPipes) {
  auto e =
      Shell("cd /testbed && nl -ba src/a.py | sed -n '10,20p' && head -n 30 b.py && tail c.py");
  EXPECT_EQ(e.opened, (Paths{"/testbed/src/a.py", "/testbed/b.py", "/testbed/c.py"}));
  EXPECT_TRUE(e.edited.empty());
  EXPECT_EQ(Shell("sed -n '1,5p' x/y.py").opened, Paths{"/testbed/x/y.py"});
  EXPECT_TRUE(Shell("sed 's/a/b/' x.py").opened.empty()) << "only sed -n counts as a view";
  EXPECT_TRUE(Shell("grep -n foo a.py; find . -name '*.py'; python a.py").opened.empty());
}

TEST(AnalyzeShell, EditsRedirectionsAndHeredocs) {
  auto e =
      Shell("cat <<'EOF' > new.py\nimport os\ncat > not_a_file.py\nEOF\nsed -i 's/x/y/' a.py b.py");
  EXPECT_EQ(e.edited, (Paths{"/testbed/new.py", "/testbed/a.py", "/testbed/b.py"}));
  EXPECT_TRUE(e.opened.empty()) << "heredoc bodies are no commands";
  auto r = Shell(
      "python run.py > out.txt 2>&1; echo x >> log.txt; ls > /dev/null; echo y | tee -a t.py");
  EXPECT_EQ(r.edited, (Paths{"/testbed/out.txt", "/testbed/log.txt", "/testbed/t.py"}));
  EXPECT_TRUE(Shell("cp a.py b.py && mv c.py d.py && rm e.py").edited.empty());
}

TEST(AnalyzeShell, DirectoriesAndQuotes) {
  std::string cwd = "/repo";
  auto e = AnalyzeShell("cd sub && cat \"my file.py\" ../top.py", &cwd);
  EXPECT_EQ(e.opened, (Paths{"/repo/sub/my file.py", "/repo/top.py"}));
  EXPECT_EQ(cwd, "/repo/sub") << "cd moves the caller's cwd (persistent shells keep it)";
  EXPECT_TRUE(Shell("cat $HOME/x.py *.py ~/y.py").opened.empty()) << "unresolvable words";
}

TEST(DetectFormat, ByKeys) {
  EXPECT_EQ(DetectFormat(R"({"info": {}, "messages": []})", "a.traj.json"), "mini-swe-agent");
  EXPECT_EQ(DetectFormat(R"({"info": {}, "trajectory": [], "history": []})", "a.traj"),
            "swe-agent");
  EXPECT_EQ(DetectFormat("{\"instance_id\": \"x\", \"history\": []}\n{}\n", "output.jsonl"),
            "openhands");
  EXPECT_EQ(DetectFormat("[1, 2]", "x.traj"), "");
}

TEST(MineRules, IntentByRule) {
  std::string why;
  EXPECT_EQ(IntentByRule("feat(core): stream rows", {}, &why), "new feature");
  EXPECT_EQ(why, "conventional prefix \"feat:\"");
  EXPECT_EQ(IntentByRule("Fix crash when adding rows", {}, &why), "bug fix") << "fix before add";
  EXPECT_EQ(IntentByRule("Add support for tabs", {}, &why), "new feature");
  EXPECT_EQ(IntentByRule("Refactor the parser", {"p.py::New"}, &why), "refactor");
  EXPECT_EQ(IntentByRule("Streaming rows", {"p.py::stream"}, &why), "new feature");
  EXPECT_EQ(why, "adds public p.py::stream");
  EXPECT_EQ(IntentByRule("Streaming rows", {}, &why), "other");
}

TEST(MineRules, IssueNumbers) {
  EXPECT_EQ(IssueNumbers("Fixes #12, closes #7 (#30)\nsee https://github.com/o/r/issues/9", 30),
            (std::vector<int>{7, 9, 12}));
  EXPECT_TRUE(IssueNumbers("color: &#35; a#1", 0).empty()) << "no reference inside words";
}

}  // namespace
}  // namespace fbkit::groundtruth
