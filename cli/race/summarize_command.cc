// fb-race summarize: agents' trajectory files (mini-swe-agent, SWE-agent, OpenHands, agent CLI
// streams) into one agent run (fbkit.race-agent/1) for score.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "agents/run_dir.h"
#include "cli/cli_common.h"
#include "cli/model_options.h"
#include "groundtruth/prompts.h"
#include "cli/race/commands.h"
#include "cli/race/race_common.h"
#include "groundtruth/summarize.h"
#include "agents/trajectory.h"
#include "sandbox/process.h"
#include "util/env.h"
#include "util/expected.h"

namespace fbkit::cli::race {
namespace {

struct SummarizeArgs {
  std::string runs;
  std::vector<std::string> reports;
  std::string format = "auto";
  std::string agent;
  ModelArgs model;
  std::string output = "-";
  std::string work_dir;
  bool quiet = false;
};

// Every trajectory format's name, the last joined with `last` ("a, b or c").
std::string FormatNames(const char* last) {
  const auto& all = agents::TrajectoryFormats();
  std::string out;
  for (size_t i = 0; i < all.size(); ++i) {
    out += (i == 0 ? "" : i + 1 == all.size() ? last : ", ");
    out += agents::TrajectoryFormatName(all[i]);
  }
  return out;
}

// The trajectories of one file in `format` (none: detected from the file), or a warning.
util::Expected<std::vector<agents::Trajectory>> ReadOneRun(
    util::Env& env, const std::string& file, const std::string& display,
    std::optional<agents::TrajectoryFormat> format) {
  // Agents wrote these: a file past any real run's size is refused, not read whole.
  constexpr uint64_t kMaxTrajectory = 256u << 20;
  if (auto st = env.Stat(file, false); st.ok() && st->size > kMaxTrajectory) {
    return util::Error{display + ": over 256 MiB, not read"};
  }
  auto text = env.ReadFile(file);
  if (!text.ok()) return text.failure();
  auto f = format ? format : agents::DetectFormat(*text, file);
  if (!f) return util::Error{display + ": not a trajectory of " + FormatNames(" or ")};
  util::Expected<std::vector<agents::Trajectory>> read = std::vector<agents::Trajectory>{};
  if (agents::IsAgentCliFormat(*f)) {
    auto t = agents::ReadAgentStream(env, *text, file, display, *f);
    if (!t.ok()) return t.failure();
    read->push_back(std::move(*t));
  } else {
    read = agents::ReadTrajectories(*text, display, *f);
    if (!read.ok()) return read;
  }
  for (auto& t : *read) agents::AddInferRunContext(env, file, &t);
  return read;
}

// Whether `file` (under `base`) lies in an `fb-extract infer` instance (a directory with a
// regular result.json) anywhere but directly in its output/: what its agent wrote in its
// workspace or below output/ is its work, not a trajectory to believe (it could name
// another instance).
bool InsideAnAgentsTree(util::Env& env, const std::string& base, const std::string& file) {
  for (size_t at = base.size(); at != std::string::npos && at < file.size();
       at = file.find('/', at + 1)) {
    std::string dir = file.substr(0, at);
    auto result = env.Stat(agents::InferInstanceDir{dir}.result(), false);
    if (!result.ok() || result->type != util::FileType::kRegular) continue;
    return util::DirName(file) != agents::InferInstanceDir{dir}.output();
  }
  return false;
}

// --swebench-report: a report file, or the report.json files under a directory.
int ApplyReports(util::Env& env, const std::string& path, std::vector<groundtruth::Summary>* all) {
  auto files = util::FilesUnder(
      env, path, [](const std::string& name) { return name == agents::kReportFile; });
  if (!files.ok()) return Fail(kWho, "--swebench-report: " + files.error()), kExitUsage;
  for (const auto& f : *files) {
    auto text = env.ReadFile(f);
    if (!text.ok()) return Fail(kWho, text.error()), kExitUsage;
    auto n = groundtruth::ApplyEvaluation(*text, f, all);
    if (!n.ok()) return Fail(kWho, n.error()), kExitUsage;
  }
  return kExitOk;
}

// The trajectories of `files` (one agent's run under `base`); unreadable files and instances
// seen before are reported and make the result kExitFileErrors.
int ReadRuns(util::Env& env, const SummarizeArgs& a, const std::string& base,
             const std::vector<std::string>& files, std::vector<groundtruth::Summary>* all) {
  std::set<std::string> seen;
  int rc = kExitOk;
  for (const auto& file : files) {
    if (InsideAnAgentsTree(env, base, file)) continue;
    std::string display = file.starts_with(base + "/") ? file.substr(base.size() + 1) : file;
    auto read = ReadOneRun(env, file, display,
                           a.format == "auto" ? std::nullopt
                                              : agents::TrajectoryFormatFromName(a.format));
    if (!read.ok()) {
      std::fprintf(stderr, "fb-race summarize: %s\n", read.error().c_str());
      rc = kExitFileErrors;
      continue;
    }
    for (auto& t : *read) {
      if (!seen.insert(t.instance_id).second) {
        std::fprintf(stderr, "fb-race summarize: %s: instance %s seen before (ignored)\n",
                     display.c_str(), t.instance_id.c_str());
        rc = kExitFileErrors;
        continue;
      }
      groundtruth::Summary s;
      s.agent.instance_id = t.instance_id;
      s.agent.patch = t.patch;
      s.trajectory = std::move(t);
      all->push_back(std::move(s));
    }
  }
  return rc;
}

int RunSummarize(const SummarizeArgs& a) {
  util::Env& env = util::RealEnv();
  auto files = groundtruth::TrajectoryFiles(env, a.runs);
  if (!files.ok()) return Fail(kWho, a.runs + ": " + files.error()), kExitUsage;
  if (files->empty())
    return Fail(kWho, a.runs + ": no trajectory files (*.traj.json, *.traj, output.jsonl)"),
           kExitUsage;
  std::string base = a.runs;
  while (base.size() > 1 && base.ends_with("/")) base.pop_back();
  std::string agent = a.agent.empty() ? base.substr(base.find_last_of('/') + 1) : a.agent;
  std::vector<groundtruth::Summary> all;
  int rc = ReadRuns(env, a, base, *files, &all);
  for (const auto& report : a.reports) {
    if (int r = ApplyReports(env, report, &all); r != kExitOk) return r;
  }
  std::string model_json;
  if (auto m = MakeModel(a.model, ""); !m.ok()) return Fail(kWho, m.error()), kExitUsage;
  if (!a.model.cmd.empty() || !a.model.llm.empty()) {
    auto scratch = ScratchDir(a.work_dir, "summarize");
    if (!scratch.ok()) return Fail(kWho, scratch.error());
    std::string work = *scratch;
    auto model = MakeModel(a.model, work);
    if (!model.ok()) return (void)env.RemoveAll(work), Fail(kWho, model.error()), kExitUsage;
    for (const auto& w : groundtruth::SummarizeAll(**model, agent, &all)) {
      std::fprintf(stderr, "fb-race summarize: %s\n", w.c_str());
      rc = kExitFileErrors;
    }
    (void)env.RemoveAll(work);
    ReportModel(kWho, model->get());
    model_json = model::ModelJson(**model);
  }
  if (!a.quiet) {
    std::fprintf(stderr, "fb-race summarize: %zu instances from %zu files (agent %s)\n", all.size(),
                 files->size(), agent.c_str());
  }
  if (all.empty()) return Fail(kWho, a.runs + ": no instance could be read");
  if (auto s = WriteOutput(env, a.output, groundtruth::AgentRunJson(agent, all, model_json)); !s.ok()) {
    return Fail(kWho, s.error());
  }
  return rc;
}

}  // namespace

void AddSummarize(CLI::App& app, int* exit_code) {
  auto a = std::make_shared<SummarizeArgs>();
  CLI::App* cmd = app.add_subcommand(
      "summarize", "Agents' trajectory files into an agent run (fbkit.race-agent/1) for score");
  cmd->footer(
      "Reads mini-swe-agent (*.traj.json), SWE-agent (*.traj, 0.x and 1.x) and OpenHands\n"
      "(output.jsonl) runs, and `fb-extract infer --agent` run directories (claude-code,\n"
      "codex and gemini-cli streams, RUN_DIR/<id>/output/<agent>.jsonl, and Trae Agent's\n"
      "trajectory, output/trae-agent.json or its own harness's <id>.json, and AutoCodeRover's\n"
      "task directories (their meta.json), with the instance's\n"
      "patch.diff). Without a model: the final patch, the files the agent opened and\n"
      "edited (from its tool calls and shell commands, relative to its repository root),\n"
      "tokens, API calls, cost and exit status, under \"trajectory\". With a model (--llm or\n"
      "--llm-cmd; fbkit.llm-summarize/1 summarize_trajectory): goal, concepts, files, tasks\n"
      "and steps.");
  cmd->add_option("RUNS", a->runs, "A run directory (searched recursively) or one trajectory file")
      ->required();
  std::vector<std::string> formats = {"auto"};
  for (auto f : agents::TrajectoryFormats()) formats.push_back(agents::TrajectoryFormatName(f));
  cmd->add_option("--format", a->format,
                  "auto (default), " + FormatNames(" or ") +
                      " (auto-code-rover: its task directory's meta.json)")
      ->check(CLI::IsMember(formats));
  cmd->add_option("--agent", a->agent, "The agent's name (default: RUNS's name)");
  AddModelOptions(cmd, &a->model, "the summaries (fbkit.llm-summarize/1)",
                  groundtruth::StepPrompts());
  cmd->add_option("--swebench-report", a->reports,
                  "applied/resolved from a SWE-bench evaluation: its run report "
                  "(<model>.<run_id>.json) or report.json files (a directory is searched); "
                  "repeatable");
  cmd->add_option("-o,--output", a->output, "Output JSON (default: stdout)");
  cmd->add_option("--work-dir", a->work_dir, "Scratch directory (default: under $TMPDIR)");
  cmd->add_flag("-q,--quiet", a->quiet, "No summary line on stderr");
  cmd->callback([a, exit_code] { *exit_code = RunSummarize(*a); });
}

}  // namespace fbkit::cli::race
