#include "agents/presets.h"


#include <cctype>

#include "sandbox/sandbox.h"
#include "util/env.h"
#include "util/strings.h"

namespace fbkit::agents {
namespace {

// The statement as one argument, read inside the sandbox.
const char* kPrompt = "\"$(cat \"$FBKIT_PROBLEM_STATEMENT\")\"";

std::string Args(const std::vector<std::string>& args) {
  std::string out;
  for (const auto& a : args) out += " " + util::ShellQuote(a);
  return out;
}

// `exec PROGRAM ARGS... PROMPT < /dev/null > output/STREAM` (headless: nothing to read on
// stdin) with `vars` (values may use the sandbox's
// $FBKIT_* variables) set for it.
std::string Exec(const std::string& vars, const std::string& program,
                 const std::vector<std::string>& args, const std::string& after_args,
                 const AgentPreset& preset) {
  return vars + " exec " + util::ShellQuote(program) + Args(args) + after_args + " " + kPrompt +
         " < /dev/null > \"$FBKIT_OUTPUT_DIR/" + preset.stream_file + "\"";
}

// Every preset's home is output/home (kept with the run), with a git configuration: the
// workspace belongs to fbkit's user, not the agent's, and git would refuse it otherwise.
const std::string kHome = "HOME=\"$FBKIT_OUTPUT_DIR/home\"";
const char* kGitConfig =
    "[safe]\n\tdirectory = *\n[user]\n\tname = fbkit agent\n\temail = agent@fbkit.invalid\n";

// A quoted string that TOML (a basic string) and YAML (a double-quoted one) both read back
// as `s`.
std::string Quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

// codex exec: its home (config, sessions/…/rollout-*.jsonl) under output/codex; a provider of
// our own when a base URL is given (this version reads no OPENAI_BASE_URL), speaking the
// Responses API.
util::Status Codex(const AgentChoice& c, const AgentPreset& p, const std::string& program, AgentLaunch* l) {
  // Everything approved, no sandbox of its own (fbkit's is the sandbox), no update checks,
  // analytics, plugins or web search (they reach other hosts), and a dead endpoint ends the
  // run instead of retrying for ever.
  std::string config =
      "# written by fb-extract infer --agent codex\n"
      "approval_policy = \"never\"\nsandbox_mode = \"danger-full-access\"\n"
      "check_for_update_on_startup = false\nweb_search = \"disabled\"\n";
  if (!c.model.empty()) config += "model = " + Quoted(c.model) + "\n";
  if (!c.model_url.empty()) config += "model_provider = \"fbkit\"\n";
  config += "\n[analytics]\nenabled = false\n\n[features]\nplugins = false\n"
            "unbounded_connection_retries = false\n";
  if (!c.model_url.empty()) {
    config += "\n[model_providers.fbkit]\nname = \"fbkit\"\nbase_url = " + Quoted(c.model_url) +
              "\nenv_key = " + Quoted(p.key_env) + "\nwire_api = \"responses\"\n";
  }
  l->output_files.emplace_back("codex/config.toml", config);
  std::vector<std::string> args = {"exec", "--json", "--skip-git-repo-check", "--sandbox",
                                   "danger-full-access"};
  args.insert(args.end(), c.extra_args.begin(), c.extra_args.end());
  l->command = Exec(kHome + " CODEX_HOME=\"$FBKIT_OUTPUT_DIR/codex\"", program, args, " --", p);
  return util::Status::Ok();
}

// claude -p: its configuration and transcripts (projects/…/<session>.jsonl) under
// output/claude; tools allowed without asking.
util::Status ClaudeCode(const AgentChoice& c, const AgentPreset& p, const std::string& program,
                AgentLaunch* l) {
  if (!c.model_url.empty()) l->vars.emplace_back("ANTHROPIC_BASE_URL", c.model_url);
  if (!c.model.empty()) {
    // Its side calls (titles, summaries) go to the same model: an endpoint may serve one.
    for (const char* var : {"ANTHROPIC_MODEL", "ANTHROPIC_DEFAULT_HAIKU_MODEL",
                            "ANTHROPIC_DEFAULT_SONNET_MODEL", "ANTHROPIC_DEFAULT_OPUS_MODEL"}) {
      l->vars.emplace_back(var, c.model);
    }
  }
  for (const char* var : {"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "DISABLE_TELEMETRY",
                          "DISABLE_AUTOUPDATER", "DISABLE_ERROR_REPORTING"}) {
    l->vars.emplace_back(var, "1");
  }
  std::vector<std::string> args = {
      "--output-format", "stream-json", "--verbose", "--allowedTools",
      "Bash Edit Write Read Glob Grep LS NotebookEdit NotebookRead TodoRead TodoWrite Agent"};
  args.insert(args.end(), c.extra_args.begin(), c.extra_args.end());
  l->command = Exec(kHome + " CLAUDE_CONFIG_DIR=\"$FBKIT_OUTPUT_DIR/claude\"", program, args, " -p", p);
  return util::Status::Ok();
}

// mini-swe-agent (Python, litellm): the model named PROVIDER/MODEL, its endpoint in the
// provider's variable; its trajectory <instance>.traj.json (rewritten after every step) and
// its config directory in output/; cost 0 for models litellm cannot price instead of
// aborting; the local cost map (no fetch at import); the workspace as its cwd (what its
// trajectory's paths are relative to).
util::Status MiniSweAgent(const AgentChoice& c, const AgentPreset& p, const std::string& program,
                          AgentLaunch* l) {
  std::string provider = c.model.substr(0, c.model.find('/'));
  if (c.model.find('/') == std::string::npos) {
    return util::Error{"agent mini-swe-agent: --model must name PROVIDER/MODEL (openai/gpt-5, "
                       "anthropic/claude-sonnet-4-5, ...), as litellm does"};
  }
  if (!c.model_url.empty()) {
    const char* var = provider == "openai"      ? "OPENAI_BASE_URL"
                      : provider == "anthropic" ? "ANTHROPIC_BASE_URL"
                      : provider == "gemini"    ? "GEMINI_API_BASE"
                                                : nullptr;
    if (!var) {
      return util::Error{"agent mini-swe-agent: --model-url works with openai/, anthropic/ and "
                         "gemini/ models (not " + provider + "/)"};
    }
    l->vars.emplace_back(var, c.model_url);
  }
  for (const auto& [k, v] : std::vector<std::pair<std::string, std::string>>{
           {"MSWEA_CONFIGURED", "true"}, {"MSWEA_SILENT_STARTUP", "1"},
           {"MSWEA_COST_TRACKING", "ignore_errors"}, {"LITELLM_LOCAL_MODEL_COST_MAP", "True"}}) {
    l->vars.emplace_back(k, v);
  }
  std::vector<std::string> args = {"-m", c.model, "-y", "--exit-immediately", "-c", "mini.yaml"};
  args.insert(args.end(), c.extra_args.begin(), c.extra_args.end());
  l->command = kHome + " MSWEA_GLOBAL_CONFIG_DIR=\"$FBKIT_OUTPUT_DIR/mini-swe-agent\" exec " +
               util::ShellQuote(program) + Args(args) +
               " -c \"environment.cwd=$FBKIT_WORKSPACE\" -o \"$FBKIT_OUTPUT_DIR/$FBKIT_INSTANCE_ID.traj.json\" -t " +
               kPrompt + " < /dev/null > \"$FBKIT_OUTPUT_DIR/" + p.stream_file + "\"";
  return util::Status::Ok();
}

// Trae Agent (trae-cli run; bytedance/trae-agent e839e559, Python >= 3.12): the model named
// PROVIDER/MODEL as its configuration names providers (openai speaks the Responses API;
// openrouter, doubao and azure chat completions), its key from PROVIDER_API_KEY (its own
// override of the configuration); the configuration in output/ without Lakeview (whose model
// calls its trajectory does not record); the statement file as the task, the workspace as
// its working directory, its trajectory output/trae-agent.json (rewritten after every step),
// its console output/trae-agent.log. It exits 0 whether or not it finished: the trajectory's
// "success" says.
util::Status TraeAgent(const AgentChoice& c, const AgentPreset& p, const std::string& program,
                       AgentLaunch* l) {
  size_t slash = c.model.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == c.model.size()) {
    return util::Error{"agent trae-agent: --model must name PROVIDER/MODEL (openai/gpt-4o, "
                       "anthropic/claude-sonnet-4-5, ...), as its configuration does"};
  }
  std::string provider = c.model.substr(0, slash), model = c.model.substr(slash + 1);
  std::string key_var;
  for (char ch : provider) key_var += static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  key_var += "_API_KEY";
  std::string config =
      "# written by fb-extract infer --agent trae-agent\n"
      "agents:\n  trae_agent:\n    enable_lakeview: false\n    model: fbkit_model\n"
      "    max_steps: 200\n    tools: [bash, str_replace_based_edit_tool, sequentialthinking, "
      "task_done]\n"
      "model_providers:\n  " + Quoted(provider) + ":\n    provider: " + Quoted(provider) +
      "\n    api_key: \"set by " + key_var + "\"\n";
  if (!c.model_url.empty()) config += "    base_url: " + Quoted(c.model_url) + "\n";
  config += "models:\n  fbkit_model:\n    model_provider: " + Quoted(provider) +
            "\n    model: " + Quoted(model) +
            "\n    max_tokens: 8192\n    temperature: 0\n    top_p: 1\n    top_k: 0\n"
            "    max_retries: 3\n    parallel_tool_calls: false\n";
  l->output_files.emplace_back("trae_config.yaml", config);
  l->command = kHome + " exec " + util::ShellQuote(program) +
               " run --file \"$FBKIT_PROBLEM_STATEMENT\" --working-dir \"$FBKIT_WORKSPACE\" "
               "--config-file \"$FBKIT_OUTPUT_DIR/trae_config.yaml\" --trajectory-file "
               "\"$FBKIT_OUTPUT_DIR/trae-agent.json\" --console-type simple" +
               Args(c.extra_args) + " < /dev/null > \"$FBKIT_OUTPUT_DIR/" + p.stream_file + "\"";
  return util::Status::Ok();
}

// AutoCodeRover (app/main.py local-issue; nus-apr/auto-code-rover 3536ac29, Python >= 3.12):
// --model one of its registered names (gpt-4o-2024-05-13, ...), its OpenAI client's key in
// OPENAI_KEY and endpoint in OPENAI_BASE_URL; the workspace as its local repository (it
// resets and cleans it before and after: its patch is only in its output), its task
// directory's files moved up into output/, then the patch it selected applied to the
// workspace. It exits 0 whether or not it made a patch: output/selected_patch.json says.
util::Status AutoCodeRover(const AgentChoice& c, const AgentPreset& p, const std::string& program,
                           AgentLaunch* l) {
  if (c.model.empty() || c.model.find('/') != std::string::npos) {
    return util::Error{"agent auto-code-rover: --model must name one of its models "
                       "(gpt-4o-2024-05-13, gpt-4o-mini-2024-07-18, claude-3-5-sonnet-20240620, "
                       "...; see its app/model/register.py)"};
  }
  if (!c.model_url.empty()) l->vars.emplace_back("OPENAI_BASE_URL", c.model_url);
  std::vector<std::string> args = {"local-issue", "--model", c.model, "--no-print"};
  args.insert(args.end(), c.extra_args.begin(), c.extra_args.end());
  l->command =
      kHome + " " + util::ShellQuote(program) + Args(args) +
      " --output-dir \"$FBKIT_OUTPUT_DIR/acr\" --task-id \"$FBKIT_INSTANCE_ID\" --local-repo "
      "\"$FBKIT_WORKSPACE\" --issue-file \"$FBKIT_PROBLEM_STATEMENT\" < /dev/null > "
      "\"$FBKIT_OUTPUT_DIR/" + p.stream_file + "\"; rc=$?\n"
      "for d in \"$FBKIT_OUTPUT_DIR\"/acr/*/; do [ -d \"$d\" ] && mv \"$d\"* \"$FBKIT_OUTPUT_DIR\"/; "
      "done; rm -rf \"$FBKIT_OUTPUT_DIR/acr\"\n"
      "p=$(sed -n 's/.*\"selected_patch\": *\"\\([^\"]*\\)\".*/\\1/p' "
      "\"$FBKIT_OUTPUT_DIR/selected_patch.json\" 2>/dev/null)\n"
      "if [ -n \"$p\" ]; then git -C \"$FBKIT_WORKSPACE\" apply \"$FBKIT_OUTPUT_DIR/$p\" || rc=1; fi\n"
      "exit $rc";
  return util::Status::Ok();
}

// gemini -p: its home (settings, tmp/<project>/chats) under output/home; the workspace
// trusted, every tool approved (-y).
util::Status GeminiCli(const AgentChoice& c, const AgentPreset& p, const std::string& program,
               AgentLaunch* l) {
  if (!c.model_url.empty()) l->vars.emplace_back("GOOGLE_GEMINI_BASE_URL", c.model_url);
  l->vars.emplace_back("GEMINI_CLI_TRUST_WORKSPACE", "true");
  // Its HTTP client reserves gigabytes of address space for WebAssembly guard pages unless
  // told not to; the sandbox's memory limit bounds the address space.
  l->vars.emplace_back("NODE_OPTIONS", "--disable-wasm-trap-handler");
  // An API key as the way in (with a base URL set it would otherwise pick "gateway" auth,
  // which headless mode refuses).
  l->output_files.emplace_back(
      "home/.gemini/settings.json",
      "{\n  \"security\": {\"auth\": {\"selectedType\": \"gemini-api-key\"}},\n"
      "  \"general\": {\"disableAutoUpdate\": true, \"disableUpdateNag\": true},\n"
      "  \"privacy\": {\"usageStatisticsEnabled\": false},\n  \"telemetry\": {\"enabled\": "
      "false}\n}\n");
  std::vector<std::string> args = {"--output-format", "stream-json", "-y"};
  if (!c.model.empty()) args.insert(args.end(), {"--model", c.model});
  args.insert(args.end(), c.extra_args.begin(), c.extra_args.end());
  l->command = Exec(kHome, program, args, " -p", p);
  return util::Status::Ok();
}

// A regular file (links followed) with an execute bit.
bool Executable(util::Env& env, const std::string& path) {
  auto st = env.Stat(path, true);
  return st.ok() && st->type == util::FileType::kRegular && (st->mode & 0111) != 0;
}

// The directory to expose for an installed executable: the npm prefix holding its
// node_modules, the virtual environment of a Python one, else its own directory.
std::string InstallRoot(util::Env& env, const std::string& executable) {
  auto resolved = env.RealPath(executable);
  std::string real = resolved.ok() ? *resolved : executable;
  // The node_modules directory itself (its .bin links, the package and its dependencies
  // are inside): its parent may be a home directory.
  if (size_t at = real.find("/node_modules/"); at != std::string::npos) {
    return real.substr(0, at + std::string("/node_modules").size());
  }
  std::string dir = util::DirName(real);
  if (env.Stat(util::JoinPath(util::DirName(dir), "pyvenv.cfg"), true).ok()) {
    return util::DirName(dir);
  }
  return dir;
}

// What the interpreter of a virtual environment `root` needs beyond `root`: the
// installation its pyvenv.cfg's `home` (a bin/ directory) names, whose standard library a
// venv's python links into; nothing when `root` is no virtual environment.
std::vector<std::string> VenvBase(util::Env& env, const std::string& root) {
  auto cfg = env.ReadFile(util::JoinPath(root, "pyvenv.cfg"));
  if (!cfg.ok()) return {};
  for (const std::string& line : util::Split(*cfg, '\n')) {
    if (!line.starts_with("home")) continue;
    size_t eq = line.find('=');
    if (eq == std::string::npos) return {};
    size_t start = line.find_first_not_of(" \t", eq + 1);
    if (start == std::string::npos) return {};
    std::vector<std::string> dirs =
        sandbox::InterpreterDirs(util::JoinPath(line.substr(start), "python3"));
    std::erase(dirs, root);
    return dirs;
  }
  return {};
}

}  // namespace

const std::vector<AgentPreset>& AgentPresets() {
  static const std::vector<AgentPreset> presets = {
      {"claude-code", "claude", "npm @anthropic-ai/claude-code", "ANTHROPIC_API_KEY",
       "claude-code.jsonl", ClaudeCode},
      {"codex", "codex", "npm @openai/codex", "OPENAI_API_KEY", "codex.jsonl", Codex},
      {"gemini-cli", "gemini", "npm @google/gemini-cli", "GEMINI_API_KEY", "gemini-cli.jsonl",
       GeminiCli},
      {"mini-swe-agent", "mini", "mini-swe-agent (PyPI)", "", "mini-swe-agent.log", MiniSweAgent},
      {"trae-agent", "trae-cli", "trae-agent (its source at a pinned commit; Python >= 3.12)", "",
       "trae-agent.log", TraeAgent},
      {"auto-code-rover", "auto-code-rover",
       "AutoCodeRover (its source at a pinned commit; Python >= 3.12)", "OPENAI_KEY",
       "auto-code-rover.log", AutoCodeRover},
  };
  return presets;
}

util::Expected<AgentLaunch> PrepareAgent(util::Env& env, const AgentChoice& c) {
  const AgentPreset* preset = nullptr;
  std::string names;
  for (const auto& p : AgentPresets()) {
    if (p.name == c.name) preset = &p;
    names += (names.empty() ? "" : ", ") + p.name;
  }
  if (!preset) return util::Error{"unknown agent '" + c.name + "' (known: " + names + ")"};
  std::string program = c.program;
  if (program.empty()) {
    for (const char* bin : {"/node_modules/.bin/", "/venv/bin/"}) {  // npm, pip
      std::string installed = util::JoinPath(c.agents_dir, preset->name + bin + preset->program);
      if (program.empty() && !c.agents_dir.empty() && Executable(env, installed)) program = installed;
    }
    if (program.empty()) program = sandbox::FindProgram(preset->program);
  }
  if (program.empty() || !Executable(env, program)) {
    return util::Error{"agent " + preset->name + ": no executable '" + preset->program +
                       "' (not under " + util::JoinPath(c.agents_dir, preset->name) +
                       ", not on PATH" + (c.program.empty() ? "" : ", not " + c.program) +
                       "); install it with `FBKIT_AGENTS=" + preset->name +
                       " ./setup.sh` (" + preset->package + ") or name it with --agent-path"};
  }
  // The file itself, not a link or a relative name: the sandbox shows its installation only.
  if (auto real = env.RealPath(program); real.ok()) program = *real;
  AgentLaunch l;
  l.key_env = preset->key_env;
  l.output_files.emplace_back("home/.gitconfig", kGitConfig);
  l.read_only.push_back(InstallRoot(env, program));
  for (const auto& dir : VenvBase(env, l.read_only.back())) l.read_only.push_back(dir);
  std::string node = sandbox::FindProgram("node");
  if (!node.empty()) l.read_only.push_back(InstallRoot(env, node));
  if (auto s = preset->configure(c, *preset, program, &l); !s.ok()) return s.failure();
  if (!c.model_url.empty()) {
    l.model_urls = {c.model_url};
  } else if (preset->name == "codex") {
    l.model_urls = {"https://api.openai.com"};
  } else if (preset->name == "claude-code") {
    l.model_urls = {"https://api.anthropic.com"};
  } else if (preset->name == "gemini-cli") {
    l.model_urls = {"https://generativelanguage.googleapis.com"};
  } else {  // litellm-based: the provider the model names; these two by default
    l.model_urls = {"https://api.openai.com", "https://api.anthropic.com"};
  }
  return l;
}

std::string WithSidecar(const std::string& sidecar, const std::string& command) {
  if (sidecar.empty()) return command;
  return "( " + sidecar +
         "\n) || { rc=$?; echo \"fb-extract infer: the --sidecar command exited $rc; the agent "
         "was not started\" >&2; exit 125; }\n" +
         command;
}

}  // namespace fbkit::agents
