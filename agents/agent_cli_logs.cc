// The coding-agent CLIs' own event streams as trajectories (formats read from real runs of
// each CLI under `fb-extract infer --agent`; fixtures/agents/trajectories/<cli>/).
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "util/json_docs.h"
#include "agents/trajectory_parts.h"
#include "util/env.h"
#include "util/strings.h"
#include "util/json_read.h"
#include "agents/run_dir.h"

namespace fbkit::agents::parts {
namespace {

using json = nlohmann::json;

// The records of a JSON Lines file; a line that is not JSON throws, naming path:line.
std::vector<json> Records(const std::string& text, const std::string& path) {
  std::vector<json> out;
  for (const auto& [line, l] : util::NumberedLines(text)) {
    if (l.find_first_not_of(" \t\r") == std::string::npos) continue;
    json j = util::ParseUntrustedJson(l);
    if (j.is_discarded() || !j.is_object()) {
      throw std::runtime_error(path + ":" + std::to_string(line) + ": not a JSON object");
    }
    out.push_back(std::move(j));
  }
  return out;
}

// The instance of an infer run's stream (RUN_DIR/<id>/output/<stream>), else the file's stem.
std::string InstanceOf(const std::string& path) {
  std::string dir = path.substr(0, path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/'));
  std::string base = path.substr(path.find_last_of('/') + 1);
  if (IsInferOutputDir(dir)) {
    std::string inst = dir.substr(0, dir.size() - std::string(kOutputDir).size());
    while (inst.ends_with("/")) inst.pop_back();
    std::string id = inst.substr(inst.find_last_of('/') + 1);
    if (!id.empty()) return id;
  }
  return base.substr(0, base.find('.'));
}

// A trajectory of `format` read from `path`, before its records.
Trajectory Begin(TrajectoryFormat format, const std::string& path) {
  Trajectory t;
  t.format = format;
  t.source = path;
  t.instance_id = InstanceOf(path);
  return t;
}

const json& Obj(const json& j, const char* key) {
  static const json empty = json::object();
  auto it = j.find(key);
  return it != j.end() && it->is_object() ? *it : empty;
}

// ---- claude-code (claude -p --output-format stream-json --verbose) ---------------------------

// A tool use's effect on the files and its action text.
std::string ClaudeTool(const json& use, Collector* col, std::string* cwd) {
  std::string name = util::TextOr(use, "name");
  const json& in = Obj(use, "input");
  if (name == "Bash") {
    std::string command = util::TextOr(in, "command");
    col->Shell(command, cwd);
    return command;
  }
  std::string file = util::TextOr(in, "file_path", util::TextOr(in, "notebook_path"));
  if (name == "Read" && !file.empty()) col->Open(file, *cwd);
  if ((name == "Edit" || name == "MultiEdit" || name == "Write" || name == "NotebookEdit") &&
      !file.empty()) {
    col->Edit(file, *cwd);
  }
  return name + " " + (file.empty() ? in.dump() : file);
}

}  // namespace

Trajectory ReadClaudeCode(const std::string& text, const std::string& path) {
  Trajectory t = Begin(TrajectoryFormat::kClaudeCode, path);
  Collector col;
  std::string cwd;
  std::map<std::string, size_t> turn_of;          // tool_use id -> turn
  std::map<std::string, json> usage_of;           // message id -> its (last) usage
  std::string thought;
  const json* result = nullptr;
  std::vector<json> records = Records(text, path);
  for (const json& r : records) {
    std::string type = util::TextOr(r, "type");
    if (type == "system" && util::TextOr(r, "subtype") == "init") {
      col.root = cwd = util::TextOr(r, "cwd");
    } else if (type == "assistant") {
      const json& m = Obj(r, "message");
      if (util::TextOr(m, "model") != "<synthetic>" && m.contains("usage")) usage_of[util::TextOr(m, "id")] = m["usage"];
      for (const json& block : m.value("content", json::array())) {
        if (util::TextOr(block, "type") == "text") thought += util::TextOr(block, "text");
        if (util::TextOr(block, "type") != "tool_use") continue;
        turn_of[util::TextOr(block, "id")] = t.turns.size();
        t.turns.push_back({Clip(thought, 1500), ClaudeTool(block, &col, &cwd), ""});
        thought.clear();
      }
    } else if (type == "user") {
      for (const json& block : Obj(r, "message").value("content", json::array())) {
        auto it = turn_of.find(util::TextOr(block, "tool_use_id"));
        if (it != turn_of.end()) t.turns[it->second].observation = Clip(Text(block.value("content", json())), 1500);
      }
    } else if (type == "result") {
      result = &r;
    }
  }
  if (!thought.empty()) t.turns.push_back({Clip(thought, 1500), "", ""});
  t.api_calls = static_cast<int64_t>(usage_of.size());
  int64_t prompt = 0, completion = 0;
  const json* totals = result && result->contains("usage") ? &(*result)["usage"] : nullptr;
  auto add = [&](const json& u) {
    prompt += Int(u, "input_tokens").value_or(0) + Int(u, "cache_creation_input_tokens").value_or(0) +
              Int(u, "cache_read_input_tokens").value_or(0);
    completion += Int(u, "output_tokens").value_or(0);
  };
  if (totals) add(*totals);
  else for (const auto& [id, u] : usage_of) add(u);
  if (totals || !usage_of.empty()) t.prompt_tokens = prompt, t.completion_tokens = completion;
  if (result) {
    t.cost = Double(*result, "total_cost_usd");
    bool error = result->value("is_error", false);
    t.exit_status = error ? "error: " + util::TextOr(*result, "terminal_reason", util::TextOr(*result, "subtype"))
                          : util::TextOr(*result, "subtype", "success");
  } else {
    t.exit_status = "incomplete: no result record";
  }
  col.Finish(&t);
  return t;
}

// ---- codex (codex exec --json) ------------------------------------------------------------

namespace {

// The script of `/usr/bin/bash -lc 'SCRIPT'` (how codex reports the commands it ran), else
// the command as it is.
std::string Unwrap(const std::string& command) {
  for (const char* flag : {" -lc ", " -c "}) {
    size_t at = command.find(flag);
    if (at == std::string::npos || command.find(' ') < at) continue;
    std::string shell = command.substr(0, at);
    if (!shell.ends_with("sh")) continue;
    std::string q = command.substr(at + std::string(flag).size());
    if (q.size() < 2) return command;
    std::string out;
    if (q.front() == '\'') {  // '...' with '\'' for a quote
      for (size_t i = 1; i < q.size(); ++i) {
        if (q.compare(i, 4, "'\\''") == 0) out += '\'', i += 3;
        else if (q[i] != '\'') out += q[i];
      }
      return out;
    }
    if (q.front() == '"') {  // "..." with \" \\ \$ \` escaped
      for (size_t i = 1; i + 1 < q.size(); ++i) {
        if (q[i] == '\\' && i + 2 < q.size() && std::string("\"\\$`").find(q[i + 1]) != std::string::npos) {
          out += q[++i];
        } else {
          out += q[i];
        }
      }
      return out;
    }
    return q;
  }
  return command;
}

// The workspace of a stream that names no directory: an infer run's beside output/; for a
// file elsewhere, the first absolute path the agent touched under a directory named
// `workspace` (what `fb-extract infer` calls it), else /workspace.
std::string WorkspaceOf(const std::string& path, const std::vector<std::string>& touched) {
  size_t at = path.rfind("/output/");
  if (path.starts_with("/") && at != std::string::npos) return path.substr(0, at) + "/workspace";
  for (const auto& p : touched) {
    size_t w = p.find("/workspace/");
    if (p.starts_with("/") && w != std::string::npos) return p.substr(0, w) + "/workspace";
  }
  return "/workspace";
}

}  // namespace

Trajectory ReadCodex(const std::string& text, const std::string& path) {
  Trajectory t = Begin(TrajectoryFormat::kCodex, path);
  std::vector<json> records = Records(text, path);
  std::vector<std::string> touched;
  for (const json& r : records) {
    for (const json& c : Obj(r, "item").value("changes", json::array())) touched.push_back(util::TextOr(c, "path"));
  }
  Collector col;
  col.root = WorkspaceOf(path, touched);
  std::string thought;
  bool usage = false, failed = false, completed = false;
  int64_t prompt = 0, completion = 0;
  for (const json& r : records) {
    std::string type = util::TextOr(r, "type");
    if (type == "turn.completed") {
      const json& u = Obj(r, "usage");
      prompt += Int(u, "input_tokens").value_or(0);
      completion += Int(u, "output_tokens").value_or(0);
      usage = completed = true;
    } else if (type == "turn.failed" || type == "error") {
      failed = true;
      t.exit_status = "error: " + util::TextOr(Obj(r, "error"), "message", util::TextOr(r, "message"));
    }
    if (type != "item.completed") continue;
    const json& item = Obj(r, "item");
    std::string kind = util::TextOr(item, "type");
    if (kind == "agent_message" || kind == "reasoning") {
      thought += util::TextOr(item, "text");
    } else if (kind == "command_execution") {
      std::string script = Unwrap(util::TextOr(item, "command"));
      std::string cwd = col.root;  // a fresh shell per command
      col.Shell(script, &cwd);
      t.turns.push_back({Clip(thought, 1500), script, Clip(util::TextOr(item, "aggregated_output"), 1500)});
      thought.clear();
    } else if (kind == "file_change") {
      std::string files;
      for (const json& c : item.value("changes", json::array())) {
        col.Edit(util::TextOr(c, "path"), col.root);
        files += " " + util::TextOr(c, "kind") + " " + util::TextOr(c, "path");
      }
      t.turns.push_back({Clip(thought, 1500), "apply_patch" + files, util::TextOr(item, "status")});
      thought.clear();
    } else if (!kind.empty()) {
      t.turns.push_back({Clip(thought, 1500), kind + " " + item.dump(), ""});
      thought.clear();
    }
  }
  if (!thought.empty()) t.turns.push_back({Clip(thought, 1500), "", ""});
  if (usage) t.prompt_tokens = prompt, t.completion_tokens = completion;
  if (!failed) t.exit_status = completed ? "completed" : "incomplete: no turn.completed record";
  col.Finish(&t);
  return t;
}

// ---- gemini-cli (gemini -p --output-format stream-json) -------------------------------------

Trajectory ReadGeminiCli(const std::string& text, const std::string& path) {
  Trajectory t = Begin(TrajectoryFormat::kGeminiCli, path);
  std::vector<json> records = Records(text, path);
  std::vector<std::string> touched;
  for (const json& r : records) {
    const json& in = Obj(r, "parameters");
    touched.push_back(util::TextOr(in, "file_path", util::TextOr(in, "absolute_path", util::TextOr(in, "directory"))));
  }
  Collector col;
  col.root = WorkspaceOf(path, touched);
  std::map<std::string, size_t> turn_of;  // tool_id -> turn
  std::string thought;
  bool in_call = false;  // records of one model response (text, tool uses) until a result
  int64_t calls = 0;
  const json* result = nullptr;
  for (const json& r : records) {
    std::string type = util::TextOr(r, "type");
    bool model_output = (type == "message" && util::TextOr(r, "role") == "assistant") || type == "tool_use";
    if (model_output && !in_call) ++calls;
    in_call = model_output || (in_call && type != "tool_result" && type != "message");
    if (type == "message" && util::TextOr(r, "role") == "user" && t.problem_statement.empty()) {
      t.problem_statement = Clip(util::TextOr(r, "content"), 20000);
    } else if (type == "message") {
      thought += util::TextOr(r, "content");
    } else if (type == "tool_use") {
      std::string name = util::TextOr(r, "tool_name");
      const json& in = Obj(r, "parameters");
      std::string action;
      if (name == "run_shell_command") {
        std::string dir = util::TextOr(in, "directory");
        std::string cwd = dir.empty() ? col.root : dir.starts_with("/") ? dir : col.root + "/" + dir;
        action = util::TextOr(in, "command");
        col.Shell(action, &cwd);  // a fresh shell per command
      } else {
        std::string file = util::TextOr(in, "file_path", util::TextOr(in, "absolute_path"));
        if (name == "read_file" && !file.empty()) col.Open(file, col.root);
        if ((name == "write_file" || name == "replace" || name == "edit") && !file.empty()) {
          col.Edit(file, col.root);
        }
        action = name + " " + (file.empty() ? in.dump() : file);
      }
      turn_of[util::TextOr(r, "tool_id")] = t.turns.size();
      t.turns.push_back({Clip(thought, 1500), action, ""});
      thought.clear();
    } else if (type == "tool_result") {
      auto it = turn_of.find(util::TextOr(r, "tool_id"));
      if (it == turn_of.end()) continue;
      std::string out = util::TextOr(r, "output");
      if (r.contains("error")) out += util::TextOr(Obj(r, "error"), "message");
      t.turns[it->second].observation = Clip(out, 1500);
    } else if (type == "result") {
      result = &r;
    }
  }
  if (!thought.empty()) t.turns.push_back({Clip(thought, 1500), "", ""});
  t.api_calls = calls;
  if (result) {
    const json& stats = Obj(*result, "stats");
    t.prompt_tokens = Int(stats, "input_tokens");
    t.completion_tokens = Int(stats, "output_tokens");
    std::string status = util::TextOr(*result, "status");
    t.exit_status = status == "error" ? "error: " + util::TextOr(Obj(*result, "error"), "message") : status;
  } else {
    t.exit_status = "incomplete: no result record";
  }
  col.Finish(&t);
  return t;
}

}  // namespace fbkit::agents::parts

namespace fbkit::agents::parts {

namespace {

// A Trae Agent tool call's effect on the files and its action text: `bash` runs in one
// persistent shell; str_replace_based_edit_tool views (opens) or creates, replaces and
// inserts (edits) `path`; json_edit_tool views or changes `file_path`.
std::string TraeTool(const json& call, Collector* col, std::string* cwd) {
  std::string name = util::TextOr(call, "name");
  const json& in = Obj(call, "arguments");
  if (name == "bash") {
    std::string command = util::TextOr(in, "command");
    col->Shell(command, cwd);
    return command;
  }
  std::string command = util::TextOr(in, "command", util::TextOr(in, "operation"));
  std::string file = util::TextOr(in, "path", util::TextOr(in, "file_path"));
  if ((name == "str_replace_based_edit_tool" || name == "json_edit_tool") && !file.empty()) {
    if (command == "view") {
      col->Open(file, *cwd);
    } else {
      col->Edit(file, *cwd);
    }
  }
  return name + (command.empty() ? "" : " " + command) + (file.empty() ? "" : " " + file);
}

// The repository root Trae Agent was given: "[Project root path]:\nPATH" in its first
// user message.
std::string TraeRoot(const json& interactions) {
  const std::string mark = "[Project root path]:\n";
  for (const json& i : interactions) {
    for (const json& m : i.value("input_messages", json::array())) {
      std::string content = util::TextOr(m, "content");
      size_t at = content.find(mark);
      if (at == std::string::npos) continue;
      std::string rest = content.substr(at + mark.size());
      return rest.substr(0, rest.find('\n'));
    }
  }
  return "";
}

}  // namespace

Trajectory ReadTraeAgent(const std::string& text, const std::string& path) {
  Trajectory t = Begin(TrajectoryFormat::kTraeAgent, path);
  std::string base = path.substr(path.find_last_of('/') + 1), dir = util::DirName(path);
  if (!IsInferOutputDir(dir) && base.ends_with(".json")) {
    t.instance_id = base.substr(0, base.size() - 5);  // Trae's own <id>.json
  }
  json j = util::ParseUntrustedJson(text);
  if (!j.is_object()) throw std::runtime_error(path + ": not a Trae Agent trajectory");
  const json interactions = j.value("llm_interactions", json::array());
  Collector col;
  col.root = TraeRoot(interactions);
  std::string cwd = col.root;
  t.problem_statement = Clip(util::TextOr(j, "task"), 20000);
  for (const json& step : j.value("agent_steps", json::array())) {
    const json& response = Obj(step, "llm_response");
    std::string thought = Clip(util::TextOr(response, "content"), 1500);
    std::map<std::string, std::string> results;
    for (const json& r : step.value("tool_results", json::array())) {
      if (r.is_object()) {
        results[util::TextOr(r, "call_id")] = util::TextOr(r, "result") + util::TextOr(r, "error");
      }
    }
    bool any = false;
    for (const json& call : step.value("tool_calls", json::array())) {
      if (!call.is_object()) continue;
      any = true;
      std::string action = TraeTool(call, &col, &cwd);
      t.turns.push_back({thought, action, Clip(results[util::TextOr(call, "call_id")], 1500)});
      thought.clear();
    }
    if (!any && !thought.empty()) t.turns.push_back({thought, "", ""});
  }
  // Usage: each model call's response. Anthropic counts cached input apart from
  // input_tokens; OpenAI's input_tokens already include it.
  bool anthropic = util::TextOr(j, "provider") == "anthropic";
  int64_t prompt = 0, completion = 0;
  for (const json& i : interactions) {
    const json& u = Obj(Obj(i, "response"), "usage");
    prompt += Int(u, "input_tokens").value_or(0);
    if (anthropic) {
      prompt += Int(u, "cache_creation_input_tokens").value_or(0) +
                Int(u, "cache_read_input_tokens").value_or(0);
    }
    completion += Int(u, "output_tokens").value_or(0);
  }
  if (!interactions.empty()) {
    t.prompt_tokens = prompt, t.completion_tokens = completion;
    t.api_calls = static_cast<int64_t>(interactions.size());
  }
  bool success = j.value("success", false);
  std::string result = util::TextOr(j, "final_result");
  t.exit_status = success ? "task_done" : "unfinished: " + result.substr(0, result.find('\n'));
  col.Finish(&t);
  return t;
}

}  // namespace fbkit::agents::parts

namespace fbkit::agents::parts {

Trajectory ReadAutoCodeRoverMeta(const std::string& text, const std::string& path) {
  Trajectory t = Begin(TrajectoryFormat::kAutoCodeRover, path);
  json j = util::ParseUntrustedJson(text);
  if (!j.is_object()) throw std::runtime_error(path + ": not an AutoCodeRover meta.json");
  const json& task = Obj(j, "task_info");
  std::string id = util::TextOr(task, "instance_id"), dir = util::DirName(path);
  bool infer = IsInferOutputDir(dir);  // the run's directory names it
  if (!id.empty() && !infer) t.instance_id = id;
  t.problem_statement = Clip(util::TextOr(task, "problem_statement"), 20000);
  t.root = util::TextOr(Obj(j, "setup_info"), "repo_path");
  return t;
}

}  // namespace fbkit::agents::parts
