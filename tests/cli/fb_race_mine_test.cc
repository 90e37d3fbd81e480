// End-to-end: RACE-bench from a bare repository with the real fb-race binary. The race_mine
// fixture's pull-request history is mined, validated and turned into ground truth once
// (ctest fixture race_mine, tests/cli/make_race_mine.sh); the tests check the mined
// instances, the funnel, -j and --shard and --whole-files, purposes from a scripted model, the HTML
// report in headless Chromium, and bad input.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "tests/testing/e2e.h"
#include "tests/testing/run.h"

namespace fbkit::testing {
namespace {

const std::string kData = FBKIT_RACE_DATA;
using nlohmann::json;

std::vector<json> JsonLines(const std::string& text) {
  std::vector<json> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) {
    if (!l.empty()) out.push_back(json::parse(l));
  }
  return out;
}

std::vector<json> Mined() { return JsonLines(ReadFileOrDie(kData + "/mined.jsonl")); }

TEST(RaceMine, KeepsFeaturePrsThatChangeTestsAndSource) {
  auto all = Mined();
  ASSERT_EQ(all.size(), 4u);
  EXPECT_EQ(all[0]["instance_id"], "acme__shop-10");
  EXPECT_EQ(all[0]["intent_reason"], "title word \"allow\"");
  std::vector<json> mined(all.begin() + 1, all.end());
  EXPECT_EQ(mined[0]["instance_id"], "acme__shop-8");
  EXPECT_EQ(mined[1]["instance_id"], "acme__shop-4");
  EXPECT_EQ(mined[2]["instance_id"], "acme__shop-2");
  EXPECT_EQ(mined[0]["intent_reason"], "adds public shop/coupon.py::apply_coupon");
  EXPECT_EQ(mined[1]["intent_reason"], "title word \"support\"");
  EXPECT_EQ(mined[2]["intent_reason"], "title word \"add\"");
  EXPECT_EQ(mined[1]["kind"], "merge");
  EXPECT_EQ(mined[2]["kind"], "squash");
  EXPECT_EQ(mined[1]["issue_numbers"], json::array({3}));
  EXPECT_EQ(mined[2]["issue_numbers"], json::array({1}));
  EXPECT_EQ(mined[1]["title"], "Support tax rates in totals");
  EXPECT_NE(mined[1]["problem_statement"].get<std::string>().find("- tax: rates table\n"),
            std::string::npos);
  auto commits = ReadFileOrDie(kData + "/h/commits");
  for (const auto& m : mined) {
    std::string patch = m["patch"], test_patch = m["test_patch"];
    EXPECT_NE(patch.find("diff --git a/shop/"), std::string::npos) << m["instance_id"];
    EXPECT_EQ(patch.find("tests/"), std::string::npos) << m["instance_id"];
    EXPECT_NE(test_patch.find("diff --git a/tests/"), std::string::npos) << m["instance_id"];
    EXPECT_EQ(test_patch.find("shop/"), std::string::npos) << m["instance_id"];
    // The base is the commit before the PR on the first-parent line.
    std::string commit = m["commit"], base = m["base_commit"];
    size_t at = commits.find(commit);
    ASSERT_NE(at, std::string::npos);
    EXPECT_EQ(commits.substr(at + commit.size() + 1, base.size()), base);
  }
}

TEST(RaceMine, ReportsTheFunnel) {
  auto r = json::parse(ReadFileOrDie(kData + "/report.json"));
  std::vector<int> counts;
  for (const auto& s : r["stages"]) counts.push_back(s["count"]);
  EXPECT_EQ(counts, (std::vector<int>{10, 7, 5, 4, 4}));
  EXPECT_EQ(r["dropped"]["branch merge"], 1);
  EXPECT_EQ(r["dropped"]["no PR number or closing issue reference"], 2);
  EXPECT_EQ(r["dropped"]["no test file changed"], 1);
  EXPECT_EQ(r["dropped"]["no Python source file changed"], 1);
  EXPECT_EQ(r["dropped"]["intent: bug fix"], 1);
  EXPECT_EQ(r["repository"], "acme/shop");
  EXPECT_NE(ReadFileOrDie(kData + "/mine.err").find("  5\tchanges tests and Python source"),
            std::string::npos);
}

TEST(RaceMine, IntentMaxLastAndDateOptions) {
  std::string repo = kData + "/h/repo";
  auto any = RunCommand({kRace, "mine", repo, "--intent", "any", "-q"});
  ASSERT_EQ(any.exit_code, 0) << any.err;
  auto all = JsonLines(any.out);
  ASSERT_EQ(all.size(), 5u);
  EXPECT_EQ(all[2]["intent"], "bug fix");
  EXPECT_EQ(all[2]["instance_id"], "repo-5") << "no origin: the directory's name";
  auto max = RunCommand({kRace, "mine", repo, "--max", "1", "-q"});
  ASSERT_EQ(max.exit_code, 0) << max.err;
  ASSERT_EQ(JsonLines(max.out).size(), 1u);
  EXPECT_EQ(JsonLines(max.out)[0]["pull_number"], 10);
  auto issue = RunCommand({kRace, "mine", repo, "--require-issue", "-q"});
  ASSERT_EQ(issue.exit_code, 0) << issue.err;
  auto linked = JsonLines(issue.out);
  ASSERT_EQ(linked.size(), 2u) << "#4 closes #3, #2 fixes #1";
  EXPECT_EQ(linked[0]["pull_number"], 4);
  EXPECT_EQ(linked[1]["pull_number"], 2);
  auto pulls = [&](std::vector<std::string> extra) {
    std::vector<std::string> argv = {kRace, "mine", repo, "-q"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    auto r = RunCommand(argv);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::vector<int> out;
    for (const auto& l : JsonLines(r.out)) out.push_back(l["pull_number"]);
    return out;
  };
  // The fixture's commits are one minute apart from 2000-01-01T00:01:00Z.
  EXPECT_EQ(pulls({"--until", "2000-01-01T00:05:30Z"}), (std::vector<int>{4, 2}));
  EXPECT_EQ(pulls({"--since", "2000-01-01T00:09:30Z"}), (std::vector<int>{10, 8}));
  auto last = RunCommand({kRace, "mine", repo, "--last", "3", "-q"});
  ASSERT_EQ(last.exit_code, 0) << last.err;
  ASSERT_EQ(JsonLines(last.out).size(), 2u) << "only #10, #9, #8 are among the newest 3";
}

TEST(RaceMine, IntentFromModelAndItsFailures) {
  std::string repo = kData + "/h/repo";
  std::string llm = kPython +
                    " -c \"import json,sys; r=json.load(sys.stdin); "
                    "print(json.dumps({'intent': 'bug fix' if 'Coupons' in r['title'] else "
                    "'new feature'}))\"";
  auto r = RunCommand({kRace, "mine", repo, "--llm-cmd", llm, "-q"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto mined = JsonLines(r.out);
  ASSERT_EQ(mined.size(), 4u) << "#8 is a bug fix now, #5 a feature";
  EXPECT_EQ(mined[1]["pull_number"], 5);
  EXPECT_EQ(mined[1]["intent_source"], "llm");
  auto bad = RunCommand({kRace, "mine", repo, "--llm-cmd", "echo '{\"intent\": \"party\"}'", "-q"});
  EXPECT_EQ(bad.exit_code, 3) << bad.err;
  EXPECT_NE(bad.err.find("unknown intent \"party\" (the rule decides)"), std::string::npos)
      << bad.err;
  EXPECT_EQ(JsonLines(bad.out).size(), 4u);
}

TEST(RaceMine, CommitsTakesAListARangeAndRepeatedOptions) {
  std::string repo = kData + "/h/repo";
  auto lines = ReadFileOrDie(kData + "/h/commits");
  std::vector<std::string> c;  // first-parent commits, newest first
  for (std::istringstream in(lines); std::getline(in, lines);) c.push_back(lines);
  ASSERT_EQ(c.size(), 10u);
  auto mine = [&](std::vector<std::string> extra) {
    std::vector<std::string> argv = {kRace, "mine", repo, "--intent", "any", "-q"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    auto r = RunCommand(argv);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::vector<std::string> out;
    for (const auto& l : JsonLines(r.out)) out.push_back(l["commit"]);
    return out;
  };
  // c[2] "Coupons (#8)", c[4] "tidy" (changes no test), c[6] "Fix rounding of totals (#5)".
  EXPECT_EQ(mine({"--commits", c[6] + "," + c[2]}), (std::vector<std::string>{c[6], c[2]}));
  EXPECT_EQ(mine({"--commits", c[6], "--commits", c[2]}), (std::vector<std::string>{c[6], c[2]}));
  ScratchDir dir;
  auto r = RunCommand({kRace, "mine", repo, "--commits", c[8] + "..", "-q", "-o", dir / "m.jsonl",
                       "--report", dir / "r.json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto report = json::parse(ReadFileOrDie(dir / "r.json"));
  std::vector<int> counts;
  for (const auto& s : report["stages"]) counts.push_back(s["count"]);
  // The range: 11 commits of both parents' lines, 2 of them merges; of the 9 single commits
  // #10, #8 and #5 change tests and source (the tax branch's commits one each, "tidy" no
  // test); #5 is a bug fix.
  EXPECT_EQ(counts, (std::vector<int>{11, 9, 3, 2, 2})) << r.err;
}

TEST(RaceMine, GoldPatchesScorePerfectlyOnTheMinedGroundTruth) {
  auto validations = JsonLines(ReadFileOrDie(kData + "/gt1/validation.jsonl"));
  ASSERT_EQ(validations.size(), 4u);
  json agent = {{"agent", "gold"}, {"instances", json::array()}};
  for (const auto& v : validations) EXPECT_EQ(v["status"], "ok") << v.dump();
  for (const auto& m : Mined()) {
    agent["instances"].push_back({{"instance_id", m["instance_id"]}, {"patch", m["patch"]}});
  }
  ScratchDir dir;
  WriteFileOrDie(dir / "gold.json", agent.dump());
  auto r =
      RunCommand({kRace, "score", "--gt", kData + "/gt1", "--agent", dir / "gold.json",
                  "--instances", kData + "/mined.jsonl", "--format", "json", "--per-instance"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto instances = json::parse(r.out)["agents"][0]["instances"];
  ASSERT_EQ(instances.size(), 4u);
  for (const auto& s : instances) {
    EXPECT_EQ(s["files"]["recall"], 1) << s.dump();
    EXPECT_EQ(s["files"]["overpred"], 0) << s.dump();
    EXPECT_EQ(s["tasks"]["recall"], 1) << s.dump();
    EXPECT_EQ(s["tasks"]["overpred"], 0) << s.dump();
  }
}

TEST(RaceMine, RedundantChangesAreEachNecessary) {
  auto gt = json::parse(ReadFileOrDie(kData + "/gt1/acme__shop-10.json"));
  EXPECT_EQ(gt["files"]["necessary"], json::array({"shop/cart.py", "shop/settings.py"}))
      << "each of the two changes makes the test pass alone";
  bool seen = false;
  for (const auto& l : JsonLines(ReadFileOrDie(kData + "/gt1/files.jsonl"))) {
    if (l["instance_id"] != "acme__shop-10") continue;
    for (const auto& a : l["file_ablations"]) {
      EXPECT_EQ(a["reason"].get<std::string>().substr(0, 17), "sufficient alone:") << a.dump();
    }
    seen = true;
  }
  EXPECT_TRUE(seen);
}

TEST(RaceMine, JobsAndShardsGiveTheSameOutputs) {
  for (const auto& e : std::filesystem::directory_iterator(kData + "/gt1")) {
    std::string name = e.path().filename();
    EXPECT_EQ(ReadFileOrDie(e.path()), ReadFileOrDie(kData + "/gt2/" + name)) << name;
    EXPECT_EQ(ReadFileOrDie(e.path()), ReadFileOrDie(kData + "/gt-files/" + name))
        << name << ": rerunning only the F2P tests or their whole files must agree";
  }
  std::string mined = kData + "/mined.jsonl";
  std::vector<std::string> v = {kRace, "validate", mined, "--python", kPython, "-q"};
  auto whole = RunCommand(v);
  ASSERT_EQ(whole.exit_code, 0) << whole.err;
  std::multiset<std::string> parts;
  for (const char* shard : {"1/2", "2/2"}) {
    auto argv = v;
    argv.insert(argv.end(), {"--shard", shard});
    auto r = RunCommand(argv);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    for (const auto& l : JsonLines(r.out)) parts.insert(l.dump());
  }
  std::multiset<std::string> all;
  for (const auto& l : JsonLines(whole.out)) all.insert(l.dump());
  EXPECT_EQ(parts, all);
  EXPECT_EQ(JsonLines(whole.out).size(), 4u);
}

TEST(RaceMine, GtAsksPurposesWithTheEntityCode) {
  ScratchDir dir;
  WriteFileOrDie(dir / "one.jsonl", Mined()[1].dump() + "\n");
  std::string llm = kPython +
                    " -c \"import json,sys; r=json.load(sys.stdin); "
                    "print(json.dumps({'purpose': 'Behaviour of ' + r['code'].split('(')[0]} "
                    "if r['task']=='purpose' else {'steps': []} if r['task']=='steps' else "
                    "{'goal': 'G', 'concepts': []}))\"";
  auto r = RunCommand({kRace, "gt", dir / "one.jsonl", "--python", kPython, "-o", dir / "gt", "-q",
                       "--llm-cmd", llm});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto gt = json::parse(ReadFileOrDie(dir / "gt/acme__shop-8.json"));
  ASSERT_EQ(gt["tasks"].size(), 2u);
  EXPECT_EQ(gt["tasks"][0]["entity"], "shop/coupon.py::apply_coupon");
  EXPECT_EQ(gt["tasks"][0]["purpose"], "Behaviour of def apply_coupon");
  EXPECT_EQ(gt["tasks"][1]["purpose"], "Behaviour of def _check");
}

std::string Chromium() {
  for (const char* p : {"/usr/bin/chromium", "/usr/bin/chromium-browser"}) {
    if (::access(p, X_OK) == 0) return p;
  }
  return "";
}

TEST(RaceMine, HtmlReportRendersInChromiumWithTheJsonNumbers) {
  ScratchDir dir;
  json gold = {{"agent", "gold"}, {"instances", json::array()}};
  json half = {{"agent", "half"}, {"instances", json::array()}};
  auto mined = Mined();
  for (size_t i = 0; i < mined.size(); ++i) {
    gold["instances"].push_back({{"instance_id", mined[i]["instance_id"]},
                                 {"patch", mined[i]["patch"]},
                                 {"resolved", true},
                                 {"applied", true}});
    half["instances"].push_back({{"instance_id", mined[i]["instance_id"]},
                                 {"files", {i == 1 ? "shop/coupon.py" : "shop/other.py"}},
                                 {"resolved", i == 1},
                                 {"applied", true}});
  }
  WriteFileOrDie(dir / "gold.json", gold.dump());
  WriteFileOrDie(dir / "half.json", half.dump());
  std::vector<std::string> argv = {
      kRace,     "score",           "--gt",     kData + "/gt1", "--agent", dir / "gold.json",
      "--agent", dir / "half.json", "--format", "json",         "--html",  dir / "r.html",
      "--svg",   dir / "r.svg"};
  auto r = RunCommand(argv);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ReadFileOrDie(dir / "r.svg").substr(0, 4), "<svg");
  std::string chromium = Chromium();
  if (chromium.empty()) GTEST_SKIP() << "chromium is not installed (setup.sh installs it)";
  auto page = RunCommand({chromium, "--headless", "--no-sandbox", "--disable-gpu",
                          "--user-data-dir=" + (dir / "profile"), "--enable-logging=stderr",
                          "--v=0", "--dump-dom", "file://" + (dir / "r.html")});
  ASSERT_EQ(page.exit_code, 0) << page.err;
  EXPECT_NE(page.out.find("data-check=\"ok 88 cells\""), std::string::npos)
      << "the page's script did not finish or found cells that differ from the JSON";
  EXPECT_EQ(page.err.find("Uncaught"), std::string::npos) << page.err;
  // Every rendered cell value equals --format json's number.
  auto scores = json::parse(r.out);
  size_t checked = 0;
  for (const auto& a : scores["agents"]) {
    for (const auto& g : a["groups"]) {
      for (const auto& [metric, m] : g["metrics"].items()) {
        if (m["value"].is_null()) continue;
        std::string needle =
            "data-metric=\"" + metric + "\" data-value=\"" + m["value"].dump() + "\"";
        EXPECT_NE(page.out.find(needle), std::string::npos) << needle;
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 20u);
  EXPECT_NE(page.out.find(">25.0</td>"), std::string::npos) << "half's Rec@F (1 of 4 instances)";
}

TEST(RaceMine, BadInputExitCodes) {
  ScratchDir dir;
  std::filesystem::create_directories(dir / "plain");
  WriteFileOrDie(dir / "plain/x.txt", "");
  struct Case {
    std::vector<std::string> argv;
    int code;
    std::string message;
  };
  std::vector<Case> cases = {
      {{kRace, "mine", dir / "nowhere"}, 2, "nowhere"},
      {{kRace, "mine", dir / "plain"}, 2, "not a git repository"},
      {{kRace, "mine", kData + "/h/repo", "--intent", "party"}, 2, "party"},
      {{kRace, "mine", kData + "/h/repo", "--ref", "no-such-branch"}, 2, "no-such-branch"},
      {{kRace, "mine", kData + "/h/repo", "--commits", "HEAD,no-such-commit"},
       2,
       "--commits no-such-commit: unknown revision 'no-such-commit'"},
      {{kRace, "mine", kData + "/h/repo", "--commits", "HEAD~1..HEAD~1"},
       2,
       "--commits HEAD~1..HEAD~1: the range holds no commit"},
      {{kRace, "mine", kData + "/h/repo", "--commits", "HEAD", "--last", "3"},
       2,
       "--last excludes --commits"},
      {{kRace, "validate", kData + "/mined.jsonl", "--shard", "3/2"}, 2, "--shard must be K/N"},
      {{kRace, "gt", kData + "/mined.jsonl", "-o", dir / "g", "-j", "0"}, 2, "jobs"},
  };
  for (const auto& c : cases) {
    auto r = RunCommand(c.argv);
    EXPECT_EQ(r.exit_code, c.code) << c.argv[1] << " " << c.argv[2] << "\n" << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
  }
}

}  // namespace
}  // namespace fbkit::testing
