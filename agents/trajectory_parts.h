// Internal to the trajectory readers (trajectory.cc, agent_cli_logs.cc): the pieces every
// format's reader shares, and the readers of the coding-agent CLIs' own logs.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "agents/trajectory.h"

namespace fbkit::agents::parts {

// Collects absolute paths and makes them repository-relative at the end.
struct Collector {
  std::string root;
  std::vector<std::string> opened, edited;

  void Shell(const std::string& command, std::string* cwd);  // AnalyzeShell's effects
  void Open(const std::string& path, const std::string& cwd);
  void Edit(const std::string& path, const std::string& cwd);
  std::vector<std::string> Relative(const std::vector<std::string>& paths) const;
  void Finish(Trajectory* t) const;  // root, opened and edited of `t`
};

void SortUnique(std::vector<std::string>* v);
std::optional<int64_t> Int(const nlohmann::json& j, const char* key);
std::optional<double> Double(const nlohmann::json& j, const char* key);
// A message's text: a string, or the text parts of a content list.
std::string Text(const nlohmann::json& content);
// `s` cut to `n` characters, saying how many more there were.
std::string Clip(const std::string& s, size_t n = 2000);
// patch_files of `t` from its patch.
void PatchFiles(Trajectory* t);

// The event streams the agent presets write (agents/presets.h), one JSON record per line;
// `path` names the file in errors. Each throws on a line that is not JSON.
Trajectory ReadClaudeCode(const std::string& text, const std::string& path);
Trajectory ReadCodex(const std::string& text, const std::string& path);
Trajectory ReadGeminiCli(const std::string& text, const std::string& path);
Trajectory ReadTraeAgent(const std::string& text, const std::string& path);
// AutoCodeRover's meta.json alone (instance, statement, root); the rest of its task
// directory is AddAutoCodeRoverRun's (trajectory.cc).
Trajectory ReadAutoCodeRoverMeta(const std::string& text, const std::string& path);

}  // namespace fbkit::agents::parts
