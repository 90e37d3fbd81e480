// The coding-agent CLIs `fb-extract infer --agent NAME` runs without a wrapper: how each is
// invoked headless with edits and shell commands auto-approved, where its installation is
// found (and exposed read-only to the sandbox), which variables and configuration files carry
// the model endpoint, key and name, and where its own logs go (under $FBKIT_OUTPUT_DIR, so
// they survive the run and fbkit reads usage and trajectories from them).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "util/env.h"
#include "util/expected.h"

namespace fbkit::agents {

struct AgentChoice;
struct AgentLaunch;

struct AgentPreset {
  std::string name;         // codex, claude-code, gemini-cli, mini-swe-agent
  std::string program;      // its executable: codex, claude, gemini, mini
  std::string package;      // where setup.sh installs it from (FBKIT_AGENTS)
  std::string key_env;      // the variable its API key is read from ("" when it depends)
  std::string stream_file;  // output/<name>.jsonl: its JSON event stream (its stdout), a
                            // trajectory format of agents/trajectory.h (mini-swe-agent:
                            // its console log; its trajectory is output/<id>.traj.json)
  // Fills in its command, variables and configuration files for `program`.
  util::Status (*configure)(const AgentChoice& choice, const AgentPreset& preset,
                            const std::string& program, AgentLaunch* launch);
};

// Every preset, by name.
const std::vector<AgentPreset>& AgentPresets();

struct AgentChoice {
  std::string name;
  std::string program;     // --agent-path: its executable; "" looks it up (below)
  std::string agents_dir;  // setup.sh's installations (below)
  std::string model;       // the model it asks for; "" its own default
  std::string model_url;   // the API's base URL; "" the vendor's
  std::vector<std::string> extra_args;  // appended to its command line
};

// How to run one agent: its command for `sh -c` (the problem statement read from
// $FBKIT_PROBLEM_STATEMENT, the event stream written to output/<stream_file>), variables, the
// paths its sandbox must show (the installation; node's when not a system path) and the
// configuration fbkit writes into output/ first.
struct AgentLaunch {
  std::string key_env;  // the preset's (AgentPreset::key_env)
  std::string command;
  std::vector<std::pair<std::string, std::string>> vars;  // environment variables
  std::vector<std::string> read_only;
  std::vector<std::pair<std::string, std::string>> output_files;
  // The model API the agent talks to, as a URL: --model-url, else its vendor's
  // (`infer --network model` forwards to these alone).
  std::vector<std::string> model_urls;
};

// The launch of `choice`. The executable is --agent-path when given, else the one setup.sh
// installed under agents_dir (DIR/<name>/node_modules/.bin or DIR/<name>/venv/bin), else the
// first on PATH; an error names the preset's package
// and how to install it, or lists the known names.
util::Expected<AgentLaunch> PrepareAgent(util::Env& env, const AgentChoice& choice);

// `command` preceded by `sidecar` (a command started in the same sandbox first, which must
// return once ready, e.g. a local model server that detaches): the agent does not start when
// the sidecar fails (exit 125, its status in the agent's log).
std::string WithSidecar(const std::string& sidecar, const std::string& command);

}  // namespace fbkit::agents
