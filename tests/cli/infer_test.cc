// End-to-end: `fb-extract infer` with the scripted agents of fixtures/agents on the tasks
// tests/cli/make_tasks.sh makes once (ctest fixture infer_tasks), then `fb-extract eval` on
// what they did: the gold agent resolves everything, the others are scored and flagged as
// their README says, the host sees nothing of them, shards merge into the unsharded run.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "tests/testing/e2e.h"
#include "tests/testing/run.h"
#include "util/utf8.h"

namespace fbkit::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::string kAgents = kSource + "/fixtures/agents";

struct AgentRun {
  RunResult infer;
  RunResult eval;
  json summary;  // eval's
  std::map<std::string, json> results;  // infer's result.json by instance id
  std::map<std::string, json> reports;  // eval's report.json by instance id
};

// A copy of the tasks the scripted agents may read (their answers): infer refuses to show an
// agent the task directories themselves.
std::string Answers(const ScratchDir& dir) {
  if (!fs::exists(dir / "answers")) fs::copy(kTasks, dir / "answers", fs::copy_options::recursive);
  return dir / "answers";
}

// infer with agent NAME into DIR/run, then eval of its predictions into DIR/eval.
AgentRun InferAndEval(const ScratchDir& dir, const std::string& agent, std::vector<std::string> extra = {}) {
  AgentRun r;
  std::string answers = Answers(dir);
  std::vector<std::string> argv = {kExtract, "infer", kTasks, "--agent-cmd", "sh " + kAgents + "/" + agent + ".sh",
                                   "-o", dir / "run", "-q", "--model", agent,
                                   "--env", "FBKIT_TEST_TASKS=" + answers,
                                   "--env", "FBKIT_TEST_AGENTS=" + kAgents,
                                   "--env", "FBKIT_TEST_OUTSIDE=" + dir / "outside",
                                   "--read-only", answers, "--read-only", kAgents,
                                   // The scripted agents read their answers from a copy of the
                                   // tasks on purpose; an honest agent's run refuses it.
                                   "--exposed-copies", "allow"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  fs::create_directories(dir / "outside");
  r.infer = RunCommand(argv);
  r.eval = RunCommand({kExtract, "eval", kTasks, "--predictions", dir / "run/predictions.jsonl",
                       "-o", dir / "eval", "-q"});
  if (fs::exists(dir / "eval/summary.json")) r.summary = json::parse(ReadFileOrDie(dir / "eval/summary.json"));
  for (const auto& e : fs::directory_iterator(dir / "run")) {
    if (fs::exists(e.path() / "result.json")) {
      r.results[e.path().filename()] = json::parse(ReadFileOrDie(e.path() / "result.json"));
    }
  }
  if (fs::exists(dir / "eval")) {
    for (const auto& e : fs::directory_iterator(dir / "eval")) {
      if (fs::exists(e.path() / "report.json")) {
        r.reports[e.path().filename()] = json::parse(ReadFileOrDie(e.path() / "report.json"));
      }
    }
  }
  return r;
}

TEST(InferE2E, GoldAgentResolvesEveryTaskAndTheWorkspaceStartsAsTheBenchmarkSays) {
  ScratchDir dir;
  AgentRun r = InferAndEval(dir, "gold");
  ASSERT_EQ(r.infer.exit_code, 0) << r.infer.err;
  ASSERT_EQ(r.eval.exit_code, 0) << r.eval.err;
  EXPECT_EQ(r.summary["instances"], 4);
  EXPECT_EQ(r.summary["resolved"], 4) << r.summary.dump(1);
  EXPECT_EQ(r.summary["tasks_without_prediction"], 0);
  for (const auto& [id, result] : r.results) {
    EXPECT_EQ(result["status"], "finished") << id;
    std::string ws = dir / ("run/" + id + "/workspace");
    // The agent started in a git repository with no remote (no way back to the task), which
    // is not kept afterwards (the agent wrote it).
    EXPECT_EQ(ReadFileOrDie(dir / ("run/" + id + "/output/start.txt")), "true\n") << id;
    EXPECT_FALSE(fs::exists(ws + "/.git")) << id;
    if (id.ends_with(".lv1")) {
      // The pre-solved repository without its F2P test file.
      std::string f2p = json::parse(ReadFileOrDie(kTasks + "/" + id + "/instance.json"))["FAIL_TO_PASS"][0];
      EXPECT_TRUE(fs::exists(ws + "/src")) << id;
      EXPECT_EQ(ReadFileOrDie(dir / ("run/" + id + "/patch.diff")).find("+++ b/" + f2p), std::string::npos);
    } else {
      EXPECT_FALSE(fs::exists(ws + "/src")) << id;  // L2: an empty project
    }
  }
  // The predictions are SWE-bench's rows, sorted, with the model's name.
  std::string preds = ReadFileOrDie(dir / "run/predictions.jsonl");
  json first = json::parse(preds.substr(0, preds.find('\n')));
  EXPECT_EQ(first["model_name_or_path"], "gold");
  EXPECT_TRUE(first.contains("model_patch"));
  // Without the tasks directory made readable, the agent cannot see it (the answer is in it).
  ScratchDir hidden;
  RunResult blind = RunCommand({kExtract, "infer", kTasks, "--agent-cmd", "sh " + kAgents + "/gold.sh",
                                "-o", hidden / "run", "-q", "--env", "FBKIT_TEST_TASKS=" + kTasks,
                                "--read-only", kAgents, "--instance",
                                r.results.begin()->first});
  EXPECT_EQ(blind.exit_code, 0) << blind.err;
  EXPECT_EQ(ReadFileOrDie(hidden / ("run/" + r.results.begin()->first + "/patch.diff")), "");
}

TEST(InferE2E, ScriptedAgentsAreScoredAndFlagged) {
  ScratchDir nothing_dir, cheat_dir, hang_dir;
  AgentRun nothing = InferAndEval(nothing_dir, "nothing");
  EXPECT_EQ(nothing.summary["empty"], 4);
  EXPECT_EQ(nothing.summary["resolved"], 0);
  EXPECT_EQ(nothing.summary["passed_rate"], 0.0);
  AgentRun cheat = InferAndEval(cheat_dir, "cheat");
  EXPECT_EQ(cheat.summary["suspicious"], 4) << cheat.summary.dump(1);
  for (const auto& [id, report] : cheat.reports) {
    bool flagged = false;
    for (const auto& why : report["suspicious_reasons"]) {
      flagged |= why.get<std::string>().find("reads the installed library's sources") != std::string::npos;
    }
    EXPECT_TRUE(flagged) << id << report.dump(1);
  }
  // Covering its tracks changes nothing: its log is out of its reach, the FIFO is not read.
  ScratchDir cover_dir;
  AgentRun cover = InferAndEval(cover_dir, "cover", {"--timeout", "60"});
  EXPECT_EQ(cover.infer.exit_code, 0) << cover.infer.err;
  EXPECT_EQ(cover.summary["suspicious"], 4) << cover.summary.dump(1);
  for (const auto& [id, result] : cover.results) {
    EXPECT_EQ(result["status"], "finished") << id;
    EXPECT_TRUE(result["usage"].is_null()) << id;
    EXPECT_NE(ReadFileOrDie(cover_dir / ("run/" + id + "/agent.log")).find("dist-packages/shapes"),
              std::string::npos) << id;
  }
  AgentRun hang = InferAndEval(hang_dir, "hang", {"--timeout", "2", "-j", "2"});
  EXPECT_EQ(hang.infer.exit_code, 0) << hang.infer.err;
  ASSERT_EQ(hang.results.size(), 4u);  // every instance ran: the run went on
  for (const auto& [id, result] : hang.results) EXPECT_EQ(result["status"], "timed_out") << id;
  json summary = json::parse(ReadFileOrDie(hang_dir / "run/infer_summary.json"));
  EXPECT_EQ(summary["timed_out"], 4);
}

// git's warnings on stderr, whose text the agent's tree chooses, are never lines of the
// listing or the patch (red team f: they were read as a diff, or the patch was lost).
TEST(InferE2E, GitsWarningsAboutTheWorkspaceAreNoPartOfItsPatch) {
  ScratchDir dir;
  AgentRun r = InferAndEval(dir, "warn");
  ASSERT_EQ(r.infer.exit_code, 0) << r.infer.err;
  ASSERT_FALSE(r.results.empty());
  for (const auto& [id, result] : r.results) {
    EXPECT_EQ(result["status"], "finished") << id << result.dump();
    std::string patch = ReadFileOrDie(fs::path(dir / "run") / id / "patch.diff");
    EXPECT_NE(patch.find("+++ b/.gitattributes\n@@ -0,0 +1 @@\n+* @bad\n"), std::string::npos) << patch;
    EXPECT_NE(patch.find("+# a change\n"), std::string::npos) << patch;
    EXPECT_EQ(patch.find("not a valid attribute name"), std::string::npos) << patch;
  }
}

TEST(InferE2E, AnAgentWritingOutsideItsWorkspaceLeavesNoTrace) {
  ScratchDir dir;
  AgentRun r = InferAndEval(dir, "escape", {"--max-patch-mb", "1"});
  ASSERT_EQ(r.infer.exit_code, 0) << r.infer.err;
  EXPECT_TRUE(fs::is_empty(dir / "outside"));
  EXPECT_FALSE(fs::exists("/etc/fbkit-agent-escaped.txt"));
  EXPECT_FALSE(fs::exists("/tmp/fbkit-agent-escaped.txt"));
  for (const auto& [id, result] : r.results) {
    // Listed one by one up to 100, then counted; empty files are charged their headers, so
    // the flood of them fills the bound as the patch they make would.
    const json& excluded = result["excluded"];
    ASSERT_EQ(excluded.size(), 101u) << id << excluded;
    // A name or contents that are no UTF-8 is left out (JSON would carry U+FFFD instead).
    const std::string not_utf8 = ": not UTF-8 (a JSON patch cannot carry its bytes)";
    EXPECT_EQ(json(std::vector<json>(excluded.begin(), excluded.begin() + 5)),
              json({"blob.bin: binary", "caf\uFFFD.txt" + not_utf8,
                    "huge.txt: 1953 KiB (over the limit)", "latin1.txt" + not_utf8,
                    "parts/c.txt: 390 KiB (past the 1 MiB the patch may have)"}))
        << id;
    for (size_t i = 5; i < 100; ++i) {
      EXPECT_TRUE(excluded[i].get<std::string>().starts_with("zflood/")) << excluded[i];
      EXPECT_TRUE(excluded[i].get<std::string>().ends_with(": 0 KiB (past the 1 MiB the patch may have)"));
    }
    unsigned unlisted = 0;
    EXPECT_EQ(std::sscanf(excluded.back().get<std::string>().c_str(),
                          "(%u more files left out, not listed)", &unlisted), 1) << excluded.back();
    std::string patch = ReadFileOrDie(dir / ("run/" + id + "/patch.diff"));
    EXPECT_LE(patch.size(), 1u << 20) << id;
    size_t flooded = 0;
    for (size_t at = patch.find("diff --git a/zflood/"); at != std::string::npos;
         at = patch.find("diff --git a/zflood/", at + 1)) {
      ++flooded;
    }
    EXPECT_GT(flooded, 100u) << id;  // the bound is filled, not refused
    EXPECT_EQ(flooded + 95 + unlisted, 3000u) << id;
    EXPECT_EQ(util::FindInvalidUtf8(patch), std::string::npos) << id;
    EXPECT_EQ(patch.find("latin1.txt"), std::string::npos) << id;
    EXPECT_NE(patch.find("+++ b/NOTES.md"), std::string::npos) << id;  // new files are in
    EXPECT_NE(patch.find("+++ b/parts/b.txt"), std::string::npos) << id;
    EXPECT_EQ(patch.find("huge.txt"), std::string::npos) << id;
    EXPECT_EQ(patch.find("parts/c.txt"), std::string::npos) << id;
    // The workspace is kept without the agent's git directories, nested ones too (their
    // configuration, hooks, commondir could make git run programs); a nested repository's
    // files are in the patch like any others.
    EXPECT_FALSE(fs::exists(dir / ("run/" + id + "/workspace/.git"))) << id;
    EXPECT_FALSE(fs::exists(dir / ("run/" + id + "/workspace/sub/.git"))) << id;
    EXPECT_FALSE(fs::exists(dir / ("run/" + id + "/workspace/newproj/.git"))) << id;
    EXPECT_NE(patch.find("+++ b/sub/f.txt"), std::string::npos) << id;
    EXPECT_NE(patch.find("+++ b/newproj/g.txt"), std::string::npos) << id;
    EXPECT_NE(patch.find("+++ b/three.odd"), std::string::npos) << id;
    EXPECT_NE(patch.find("+++ b/locked/f"), std::string::npos) << id;
    // Nothing in the kept workspace makes git take it, or a directory in it, for a bare
    // repository; no setuid or setgid bit is left; a file named HEAD is an ordinary file.
    std::string ws = dir / ("run/" + id + "/workspace");
    EXPECT_FALSE(fs::exists(ws + "/HEAD")) << id;
    EXPECT_FALSE(fs::exists(ws + "/bare/HEAD")) << id;
    EXPECT_FALSE(fs::exists(ws + "/linked/HEAD")) << id;
    EXPECT_NE(RunCommand({"/usr/bin/git", "-C", ws + "/linked", "status"}).exit_code, 0);
    EXPECT_EQ(fs::status(ws + "/open-dir").permissions() & fs::perms::others_write, fs::perms::none) << id;
    EXPECT_NE(patch.find("+++ b/config"), std::string::npos) << id;
    RunResult status = RunCommand({"/usr/bin/git", "-C", ws + "/bare", "status"});
    EXPECT_NE(status.exit_code, 0) << status.out;
    EXPECT_FALSE(fs::exists("/tmp/fbkit-agent-bare-ran"));
    for (const char* f : {"suid-sh", "sgid-dir"}) {
      auto perms = fs::status(ws + "/" + f).permissions();
      EXPECT_EQ(perms & (fs::perms::set_uid | fs::perms::set_gid), fs::perms::none) << id << " " << f;
    }
  }
}

// --network model: the agent reaches its model's endpoint through fbkit's proxy and nothing
// else: not another loopback server of the host, not the endpoint directly, no DNS.
TEST(InferE2E, NetworkModelReachesTheModelAlone) {
  const std::string kSolved = "fbkit-fixtures__extract_features.ce05f7f2.test_stats.8a32a05c.lv1";
  ScratchDir dir, agent;
  // Two servers on the host's loopback, each gone after a minute: the model's and another,
  // each on a port the kernel chose, written to DIR/<name>.port once it listens.
  std::map<std::string, std::string> ports;
  for (const char* name : {"model", "other"}) {
    std::string serve =
        "timeout 60 /usr/bin/python3 -c 'import http.server, os, sys\n"
        "class H(http.server.BaseHTTPRequestHandler):\n"
        "    def do_GET(self):\n"
        "        self.send_response(200); self.end_headers(); self.wfile.write(sys.argv[1].encode())\n"
        "    def log_message(self, *a): pass\n"
        "s = http.server.HTTPServer((\"127.0.0.1\", 0), H)\n"
        "open(sys.argv[2] + \".tmp\", \"w\").write(str(s.server_port))\n"
        "os.rename(sys.argv[2] + \".tmp\", sys.argv[2])\n"
        "s.serve_forever()' " + std::string(name) + " " + dir / (std::string(name) + ".port") +
        " >/dev/null 2>&1 &";
    ASSERT_EQ(std::system(serve.c_str()), 0);
    for (int i = 0; i < 100 && !fs::exists(dir / (std::string(name) + ".port")); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ports[name] = ReadFileOrDie(dir / (std::string(name) + ".port"));
  }
  WriteFileOrDie(agent / "net.sh",
                 "/usr/bin/python3 - > \"$FBKIT_OUTPUT_DIR/net.txt\" 2>&1 <<'PY'\n"
                 "import socket, sys, urllib.request\n"
                 "for name, port in (('model', " + ports["model"] + "), ('other', " + ports["other"] + ")):\n"
                 "    try:\n"
                 "        body = urllib.request.urlopen('http://127.0.0.1:%d/' % port, timeout=10).read()\n"
                 "        print(name, 'proxied', body.decode())\n"
                 "    except Exception as e:\n"
                 "        print(name, 'proxied', type(e).__name__)\n"
                 "    try:\n"
                 "        socket.create_connection(('127.0.0.1', port), timeout=3)\n"
                 "        print(name, 'direct', 'connected')\n"
                 "    except OSError as e:\n"
                 "        print(name, 'direct', type(e).__name__)\n"
                 "try:\n"
                 "    socket.getaddrinfo('localhost.localdomain', 443)\n"
                 "    print('dns', 'answered')\n"
                 "except OSError as e:\n"
                 "    print('dns', type(e).__name__)\n"
                 "PY\n");
  // Readable by the agent, which runs as nobody when the tests run as root.
  fs::permissions(agent.path(), fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                    fs::perms::others_read | fs::perms::others_exec);
  fs::permissions(agent / "net.sh", fs::perms::owner_read | fs::perms::owner_write |
                                        fs::perms::group_read | fs::perms::others_read);
  RunResult r = RunCommand({kExtract, "infer", kTasks, "--instance", kSolved, "--agent-cmd",
                            "sh " + agent / "net.sh", "--read-only", agent.path(), "-o",
                            dir / "run", "-q", "--network", "--allow-endpoint",
                            "127.0.0.1:" + ports["model"]});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ReadFileOrDie(dir / ("run/" + kSolved + "/output/net.txt")),
            "model proxied model\nmodel direct ConnectionRefusedError\n"
            "other proxied HTTPError\nother direct ConnectionRefusedError\ndns gaierror\n");
  json result = json::parse(ReadFileOrDie(dir / ("run/" + kSolved + "/result.json")));
  EXPECT_EQ(result["network"], "model");
  EXPECT_EQ(result["network_refused"],
            json({"GET 127.0.0.1:" + ports["other"] + ": not an allowed endpoint"}));
  // No endpoint to forward to is a usage error, not an agent without a model.
  RunResult none = RunCommand({kExtract, "infer", kTasks, "--agent-cmd", "true", "-o",
                               dir / "run2", "-q", "--network"});
  EXPECT_EQ(none.exit_code, 2) << none.err;
  EXPECT_NE(none.err.find("--allow-endpoint"), std::string::npos) << none.err;
}

TEST(InferE2E, TokenUsageReachesTheEvalSummary) {
  ScratchDir usage_dir, traj_dir;
  AgentRun usage = InferAndEval(usage_dir, "usage");
  EXPECT_EQ(usage.summary["resolved"], 4);
  EXPECT_EQ(usage.summary["instances_with_usage"], 4);
  EXPECT_EQ(usage.summary["mean_input_tokens"], 120000.0);
  EXPECT_EQ(usage.summary["mean_output_tokens"], 3400.0);
  for (const auto& [id, report] : usage.reports) EXPECT_EQ(report["cost"], 0.42) << id;
  RunResult table = RunCommand({kExtract, "eval", kTasks, "--predictions",
                                usage_dir / "run/predictions.jsonl", "-o", usage_dir / "eval",
                                "-q", "--format", "table"});
  EXPECT_NE(table.out.find("token IO (4 instances): 120000 input, 3400 output per instance"),
            std::string::npos) << table.out;
  AgentRun traj = InferAndEval(traj_dir, "trajectory", {"--env", "FBKIT_TEST_TRAJECTORY=swe-agent.traj"});
  EXPECT_EQ(traj.summary["mean_input_tokens"], 7141.0);
  EXPECT_EQ(traj.summary["mean_output_tokens"], 243.0);
}

// What an agent leaves for fbkit's host side to read (a stream nested a million levels, a
// usage file of a million values, a FIFO where git reads a repository's HEAD) neither
// crashes, hangs nor swells infer: every instance finishes, its patch collected, resolved.
TEST(InferE2E, WhatAnAgentLeavesCannotCrashOrHangTheRun) {
  ScratchDir dir;
  AgentRun r = InferAndEval(dir, "bomb", {"--timeout", "120"});
  ASSERT_EQ(r.infer.exit_code, 0) << r.infer.err;
  EXPECT_EQ(r.results.size(), 4u);
  for (const auto& [id, result] : r.results) EXPECT_EQ(result["status"], "finished") << id << result;
  EXPECT_EQ(r.summary["resolved"], 4) << r.summary.dump(1);
}

// Runs the commands as concurrent processes and returns their results in order.
std::vector<RunResult> Concurrently(const std::vector<std::vector<std::string>>& commands) {
  std::vector<RunResult> out(commands.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < commands.size(); ++i) {
    threads.emplace_back([&, i] { out[i] = RunCommand(commands[i]); });
  }
  for (auto& t : threads) t.join();
  return out;
}

TEST(InferE2E, ConcurrentShardsMergeIntoTheUnshardedRunByteForByte) {
  ScratchDir whole, sharded;
  AgentRun all = InferAndEval(whole, "gold");
  ASSERT_EQ(all.infer.exit_code, 0);
  ASSERT_EQ(all.eval.exit_code, 0);
  std::vector<std::string> base = {kExtract, "infer", kTasks, "--agent-cmd", "sh " + kAgents + "/gold.sh",
                                   "-o", sharded / "run", "-q", "--model", "gold",
                                   "--env", "FBKIT_TEST_TASKS=" + Answers(sharded), "--env", "FBKIT_TEST_AGENTS=" + kAgents,
                                   "--env", "FBKIT_TEST_OUTSIDE=" + sharded / "outside",
                                   "--read-only", Answers(sharded), "--read-only", kAgents,
                                   "--exposed-copies", "allow"};
  std::vector<std::vector<std::string>> infers, evals;
  for (const char* shard : {"1/3", "2/3", "3/3"}) {
    auto argv = base;
    argv.insert(argv.end(), {"--shard", shard});
    infers.push_back(argv);
    evals.push_back({kExtract, "eval", kTasks, "--predictions", whole / "run/predictions.jsonl",
                     "-o", sharded / "eval", "-q", "--shard", shard});
  }
  for (const auto& r : Concurrently(infers)) EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ReadFileOrDie(sharded / "run/predictions.jsonl"), ReadFileOrDie(whole / "run/predictions.jsonl"));
  EXPECT_TRUE(fs::exists(sharded / "run/infer_summary.2-of-3.json"));
  for (const auto& r : Concurrently(evals)) EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ReadFileOrDie(sharded / "eval/summary.json"), ReadFileOrDie(whole / "eval/summary.json"));
  for (const auto& [id, report] : all.reports) {
    EXPECT_EQ(ReadFileOrDie(sharded / ("eval/" + id + "/report.json")),
              ReadFileOrDie(whole / ("eval/" + id + "/report.json"))) << id;
  }
  // A second run finds every instance finished and leaves everything as it was.
  fs::path marker = sharded / ("run/" + all.results.begin()->first + "/workspace/marker");
  WriteFileOrDie(marker, "x");
  RunResult again = RunCommand(base);
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_TRUE(fs::exists(marker));
  EXPECT_EQ(ReadFileOrDie(sharded / "run/predictions.jsonl"), ReadFileOrDie(whole / "run/predictions.jsonl"));
}

TEST(InferE2E, BadInputGetsClearErrors) {
  ScratchDir dir;
  RunResult no_cmd = RunCommand({kExtract, "infer", kTasks, "-o", dir / "r"});
  EXPECT_EQ(no_cmd.exit_code, 2);
  EXPECT_NE(no_cmd.err.find("--agent-cmd"), std::string::npos) << no_cmd.err;
  RunResult shard = RunCommand({kExtract, "infer", kTasks, "--agent-cmd", "true", "-o", dir / "r", "--shard", "4/3"});
  EXPECT_EQ(shard.exit_code, 2);
  EXPECT_NE(shard.err.find("--shard must be K/N"), std::string::npos) << shard.err;
  RunResult tasks = RunCommand({kExtract, "infer", dir / "none", "--agent-cmd", "true", "-o", dir / "r"});
  EXPECT_EQ(tasks.exit_code, 1);
  EXPECT_NE(tasks.err.find(dir / "none"), std::string::npos) << tasks.err;
  RunResult env = RunCommand({kExtract, "infer", kTasks, "--agent-cmd", "true", "-o", dir / "r",
                              "--pass-env", "FBKIT_SURELY_UNSET_VARIABLE"});
  EXPECT_EQ(env.exit_code, 2);
  EXPECT_NE(env.err.find("FBKIT_SURELY_UNSET_VARIABLE"), std::string::npos) << env.err;
  RunResult unknown = RunCommand({kExtract, "infer", kTasks, "--agent", "aider", "-o", dir / "r"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("unknown agent 'aider' (known: claude-code, codex, gemini-cli, mini-swe-agent, trae-agent, auto-code-rover)"),
            std::string::npos) << unknown.err;
  // Nothing shows the agent its task directories, not even through a link.
  fs::create_directory_symlink(kTasks, dir / "tasks-link");
  for (std::string shown : {kTasks, fs::path(kTasks).parent_path().string(), std::string(dir / "tasks-link")}) {
    RunResult gold = RunCommand({kExtract, "infer", kTasks, "--agent-cmd", "true", "-o", dir / "r",
                                 "--read-only", shown});
    EXPECT_EQ(gold.exit_code, 1) << shown;
    EXPECT_NE(gold.err.find("would show the agent the task directory"), std::string::npos) << gold.err;
  }
  RunResult both = RunCommand({kExtract, "infer", kTasks, "--agent", "codex", "--agent-cmd", "true", "-o", dir / "r"});
  EXPECT_EQ(both.exit_code, 2) << both.err;
  RunResult url = RunCommand({kExtract, "infer", kTasks, "--agent-cmd", "true", "--model-url", "http://x", "-o", dir / "r"});
  EXPECT_EQ(url.exit_code, 2);
  EXPECT_NE(url.err.find("go with --agent NAME"), std::string::npos) << url.err;
  RunResult missing = RunCommand({kExtract, "infer", kTasks, "--agent", "gemini-cli", "--agent-path",
                                  dir / "no/gemini", "-o", dir / "r"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("FBKIT_AGENTS=gemini-cli ./setup.sh"), std::string::npos) << missing.err;
  EXPECT_FALSE(fs::exists(dir / "r/predictions.jsonl"));
  // A task whose presolved/ is a link (to another repository of the host) is refused before
  // any git reads it (red team round 6: the clone handed that repository to the agent).
  std::string one;
  for (const auto& e : fs::directory_iterator(kTasks)) {
    if (e.path().string().ends_with(".lv1")) one = e.path();
  }
  ASSERT_FALSE(one.empty());
  fs::create_directories(dir / "linked.lv1");
  for (const char* f : {"instance.json", "problem_statement.md", "patch.diff", "test_patch.diff"}) {
    fs::copy_file(one + "/" + f, dir / ("linked.lv1/" + std::string(f)));
  }
  fs::create_directory_symlink(one + "/presolved", dir / "linked.lv1/presolved");
  RunResult linked = RunCommand({kExtract, "infer", dir / "linked.lv1", "--agent-cmd", "true",
                                 "-o", dir / "r2"});
  EXPECT_EQ(linked.exit_code, 1);
  std::string result = ReadFileOrDie(dir / "r2" / fs::path(one).filename() / "result.json");
  EXPECT_NE(result.find("presolved: not a directory"), std::string::npos) << result;
}

// An agent command the sandbox cannot show fails before any instance runs, naming the path
// and --read-only; one that exists nowhere stops the run at its first instance.
TEST(InferE2E, AnAgentThatCannotStartFailsFastNotOncePerInstance) {
  ScratchDir dir;
  fs::create_directories(dir / "bin");
  std::ofstream(dir / "bin/agent.sh") << "#!/bin/sh\nexit 0\n";
  fs::permissions(dir / "bin/agent.sh", fs::perms::owner_all | fs::perms::group_read |
                                          fs::perms::group_exec | fs::perms::others_read |
                                          fs::perms::others_exec);
  RunResult hidden = RunCommand({kExtract, "infer", kTasks, "--agent-cmd", dir / "bin/agent.sh", "-o", dir / "r1", "-q"});
  EXPECT_EQ(hidden.exit_code, 1);
  EXPECT_NE(hidden.err.find("names " + dir / "bin/agent.sh" + ", which the agent will not see"),
            std::string::npos) << hidden.err;
  EXPECT_NE(hidden.err.find("--read-only"), std::string::npos) << hidden.err;
  EXPECT_FALSE(fs::exists(dir / "r1/predictions.jsonl"));
  // Exposed, the same command runs.
  RunResult shown = RunCommand({kExtract, "infer", kTasks, "--agent-cmd", dir / "bin/agent.sh", "-o", dir / "r2", "-q",
                                "--read-only", dir / "bin", "--instance", "fbkit-fixtures__extract_features.ce05f7f2.test_stats.8a32a05c.lv1"});
  EXPECT_EQ(shown.exit_code, 0) << shown.err;
  // Not found inside the sandbox (nor on the host): the first instance says why, the rest never run.
  RunResult gone = RunCommand({kExtract, "infer", kTasks, "--agent-cmd", "exec /opt/fbkit-no-such-agent --go",
                               "-o", dir / "r3", "-q"});
  EXPECT_EQ(gone.exit_code, 1);
  EXPECT_NE(gone.err.find("stopped: "), std::string::npos) << gone.err;
  EXPECT_NE(gone.err.find("/opt/fbkit-no-such-agent: not found"), std::string::npos) << gone.err;
  size_t ran = 0;
  for (const auto& e : fs::directory_iterator(dir / "r3")) ran += fs::exists(e.path() / "result.json");
  EXPECT_EQ(ran, 1u);
  EXPECT_EQ(ReadFileOrDie(dir / "r3/predictions.jsonl"), "");
}

// A report that cannot be written is an error naming it, not a silent gap in the summary.
TEST(InferE2E, AReportThatCannotBeWrittenIsAnError) {
  ScratchDir dir;
  const std::string id = "fbkit-fixtures__extract_features.ce05f7f2.test_stats.8a32a05c.lv1";
  RunResult infer = RunCommand({kExtract, "infer", kTasks, "--agent-cmd", "true", "--instance", id,
                                "-o", dir / "run", "-q"});
  ASSERT_EQ(infer.exit_code, 0) << infer.err;
  fs::create_directories(dir / "eval");
  std::ofstream(dir / ("eval/" + id)) << "a file where the instance's directory goes";
  RunResult eval = RunCommand({kExtract, "eval", kTasks, "--predictions", dir / "run/predictions.jsonl",
                               "-o", dir / "eval", "-q"});
  EXPECT_EQ(eval.exit_code, 1) << eval.err;
  EXPECT_NE(eval.err.find("writing a report: " + dir / ("eval/" + id)), std::string::npos) << eval.err;
}

}  // namespace
}  // namespace fbkit::testing
