// The agent presets of `fb-extract infer --agent` (agents/presets.h): lookup, errors, what
// each writes and runs. Their runs against the real CLIs are in tests/cli/agents_test.cc.
#include "agents/presets.h"

#include <sys/stat.h>

#include <gtest/gtest.h>

#include <filesystem>

#include "tests/testing/run.h"

namespace fbkit::agents {
namespace {

using testing::ScratchDir;
using testing::WriteFileOrDie;

// A fake installation DIR/<name>/node_modules/.bin/<program> (a link into its package, as
// npm makes it).
std::string FakeInstall(const ScratchDir& dir, const std::string& name, const std::string& program) {
  namespace fs = std::filesystem;
  std::string pkg = dir / (name + "/node_modules/pkg");
  fs::create_directories(pkg);
  fs::create_directories(dir / (name + "/node_modules/.bin"));
  WriteFileOrDie(pkg + "/cli.js", "#!/usr/bin/env node\n");
  ::chmod((pkg + "/cli.js").c_str(), 0755);
  fs::create_symlink("../pkg/cli.js", dir / (name + "/node_modules/.bin/" + program));
  return dir / name;
}

std::string FileOf(const AgentLaunch& l, const std::string& rel) {
  for (const auto& [path, content] : l.output_files) {
    if (path == rel) return content;
  }
  return "(none)";
}

TEST(AgentPresets, UnknownAndMissingAgentsSayWhatToDo) {
  auto unknown = PrepareAgent(util::RealEnv(), {"aider", "", "/nowhere", "", "", {}});
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error(), "unknown agent 'aider' (known: claude-code, codex, gemini-cli, mini-swe-agent, trae-agent, auto-code-rover)");
  auto missing = PrepareAgent(util::RealEnv(), {"codex", "/nowhere/codex", "/nowhere", "", "", {}});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().find("FBKIT_AGENTS=codex ./setup.sh"), std::string::npos) << missing.error();
  EXPECT_NE(missing.error().find("--agent-path"), std::string::npos);
}

TEST(AgentPresets, CodexRunsHeadlessWithItsProviderInItsHome) {
  ScratchDir dir;
  std::string root = FakeInstall(dir, "codex", "codex");
  auto l = PrepareAgent(util::RealEnv(), {"codex", "", dir.path(), "gpt-5.5", "http://127.0.0.1:9/v1", {"--oss"}});
  ASSERT_TRUE(l.ok()) << l.error();
  EXPECT_EQ(l->read_only.front(), root + "/node_modules") << "not its parent, which may be a home";
  EXPECT_NE(l->command.find("exec '" + root + "/node_modules/pkg/cli.js'"), std::string::npos)
      << "the link resolved: " << l->command;
  EXPECT_NE(l->command.find("CODEX_HOME=\"$FBKIT_OUTPUT_DIR/codex\""), std::string::npos);
  EXPECT_NE(l->command.find("'exec' '--json' '--skip-git-repo-check' '--sandbox' "
                            "'danger-full-access' '--oss' -- \"$(cat \"$FBKIT_PROBLEM_STATEMENT\")\" "
                            "< /dev/null > \"$FBKIT_OUTPUT_DIR/codex.jsonl\""),
            std::string::npos) << l->command;
  std::string config = FileOf(*l, "codex/config.toml");
  EXPECT_NE(config.find("model = \"gpt-5.5\"\nmodel_provider = \"fbkit\"\n"), std::string::npos) << config;
  EXPECT_NE(config.find("base_url = \"http://127.0.0.1:9/v1\"\nenv_key = \"OPENAI_API_KEY\"\n"
                        "wire_api = \"responses\""),
            std::string::npos) << config;
  EXPECT_NE(FileOf(*l, "home/.gitconfig").find("directory = *"), std::string::npos);
  // Without an endpoint: the vendor's, no provider of ours.
  auto plain = PrepareAgent(util::RealEnv(), {"codex", "", dir.path(), "", "", {}});
  EXPECT_EQ(FileOf(*plain, "codex/config.toml").find("fbkit\""), std::string::npos);
}

TEST(AgentPresets, ClaudeCodeAndGeminiCliTakeTheirEndpointFromVariables) {
  ScratchDir dir;
  FakeInstall(dir, "claude-code", "claude");
  FakeInstall(dir, "gemini-cli", "gemini");
  auto claude = PrepareAgent(util::RealEnv(), {"claude-code", "", dir.path(), "m1", "http://h:1", {}});
  ASSERT_TRUE(claude.ok()) << claude.error();
  auto has = [](const AgentLaunch& l, const std::string& k, const std::string& v) {
    return std::find(l.vars.begin(), l.vars.end(), std::pair<std::string, std::string>{k, v}) != l.vars.end();
  };
  EXPECT_TRUE(has(*claude, "ANTHROPIC_BASE_URL", "http://h:1"));
  EXPECT_TRUE(has(*claude, "ANTHROPIC_MODEL", "m1"));
  EXPECT_TRUE(has(*claude, "ANTHROPIC_DEFAULT_HAIKU_MODEL", "m1"));
  EXPECT_TRUE(has(*claude, "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"));
  EXPECT_NE(claude->command.find("'--output-format' 'stream-json' '--verbose'"), std::string::npos);
  EXPECT_NE(claude->command.find("> \"$FBKIT_OUTPUT_DIR/claude-code.jsonl\""), std::string::npos);
  auto gemini = PrepareAgent(util::RealEnv(), {"gemini-cli", "", dir.path(), "m2", "http://h:2", {}});
  ASSERT_TRUE(gemini.ok()) << gemini.error();
  EXPECT_TRUE(has(*gemini, "GOOGLE_GEMINI_BASE_URL", "http://h:2"));
  EXPECT_TRUE(has(*gemini, "GEMINI_CLI_TRUST_WORKSPACE", "true"));
  EXPECT_NE(gemini->command.find("'-y' '--model' 'm2' -p"), std::string::npos) << gemini->command;
  EXPECT_NE(FileOf(*gemini, "home/.gemini/settings.json").find("\"selectedType\": \"gemini-api-key\""),
            std::string::npos);
}

TEST(AgentPresets, MiniSweAgentRunsFromItsVirtualEnvironmentWithAProviderModel) {
  namespace fs = std::filesystem;
  ScratchDir dir;
  fs::create_directories(dir / "mini-swe-agent/venv/bin");
  WriteFileOrDie(dir / "mini-swe-agent/venv/pyvenv.cfg", "home = /usr/bin\n");
  WriteFileOrDie(dir / "mini-swe-agent/venv/bin/mini", "#!/usr/bin/env python3\n");
  ::chmod((dir / "mini-swe-agent/venv/bin/mini").c_str(), 0755);
  auto bare = PrepareAgent(util::RealEnv(), {"mini-swe-agent", "", dir.path(), "gpt-5", "", {}});
  ASSERT_FALSE(bare.ok());
  EXPECT_NE(bare.error().find("PROVIDER/MODEL"), std::string::npos) << bare.error();
  auto odd = PrepareAgent(util::RealEnv(), {"mini-swe-agent", "", dir.path(), "xai/grok", "http://h:3", {}});
  ASSERT_FALSE(odd.ok());
  EXPECT_NE(odd.error().find("not xai/"), std::string::npos) << odd.error();
  auto l = PrepareAgent(util::RealEnv(), {"mini-swe-agent", "", dir.path(), "openai/gpt-5", "http://h:3/v1", {}});
  ASSERT_TRUE(l.ok()) << l.error();
  EXPECT_EQ(l->read_only.front(), dir / "mini-swe-agent/venv") << "the whole virtual environment";
  EXPECT_NE(std::find(l->vars.begin(), l->vars.end(), std::pair<std::string, std::string>{"OPENAI_BASE_URL", "http://h:3/v1"}),
            l->vars.end());
  EXPECT_NE(l->command.find("'-m' 'openai/gpt-5' '-y' '--exit-immediately'"), std::string::npos) << l->command;
  EXPECT_NE(l->command.find("-o \"$FBKIT_OUTPUT_DIR/$FBKIT_INSTANCE_ID.traj.json\""), std::string::npos);
}

TEST(AgentPresets, TraeAgentGetsItsConfigurationAndItsInterpretersInstallation) {
  ScratchDir dir;
  // A venv made from an interpreter outside /usr: its installation must be shown too.
  std::filesystem::create_directories(dir / "py312/bin");
  std::filesystem::create_directories(dir / "trae-agent/venv/bin");
  WriteFileOrDie(dir / "trae-agent/venv/pyvenv.cfg", "home = " + dir / "py312/bin" + "\n");
  WriteFileOrDie(dir / "trae-agent/venv/bin/trae-cli", "#!/usr/bin/env python3\n");
  ::chmod((dir / "trae-agent/venv/bin/trae-cli").c_str(), 0755);
  auto bare = PrepareAgent(util::RealEnv(), {"trae-agent", "", dir.path(), "gpt-4o", "", {}});
  ASSERT_FALSE(bare.ok());
  EXPECT_NE(bare.error().find("PROVIDER/MODEL"), std::string::npos) << bare.error();
  auto l = PrepareAgent(util::RealEnv(), {"trae-agent", "", dir.path(), "openai/gpt-4o", "http://h:3/v1", {"--max-steps", "9"}});
  ASSERT_TRUE(l.ok()) << l.error();
  EXPECT_EQ(l->read_only[0], dir / "trae-agent/venv");
  EXPECT_EQ(l->read_only[1], dir / "py312") << "the interpreter the venv links to";
  std::string config = FileOf(*l, "trae_config.yaml");
  EXPECT_NE(config.find("enable_lakeview: false"), std::string::npos) << config;
  EXPECT_NE(config.find("  \"openai\":\n    provider: \"openai\"\n    api_key: \"set by OPENAI_API_KEY\"\n"
                        "    base_url: \"http://h:3/v1\"\n"),
            std::string::npos)
      << config;
  EXPECT_NE(config.find("    model: \"gpt-4o\"\n"), std::string::npos) << config;
  EXPECT_NE(l->command.find("run --file \"$FBKIT_PROBLEM_STATEMENT\" --working-dir \"$FBKIT_WORKSPACE\""),
            std::string::npos)
      << l->command;
  EXPECT_NE(l->command.find("--trajectory-file \"$FBKIT_OUTPUT_DIR/trae-agent.json\" "
                            "--console-type simple '--max-steps' '9' < /dev/null > "
                            "\"$FBKIT_OUTPUT_DIR/trae-agent.log\""),
            std::string::npos)
      << l->command;
}

TEST(AgentPresets, ASidecarStartsFirstAndAFailedOneStopsTheAgent) {
  EXPECT_EQ(WithSidecar("", "agent"), "agent");
  std::string both = WithSidecar("server --detach", "agent");
  EXPECT_TRUE(both.starts_with("( server --detach\n) || { rc=$?;")) << both;
  EXPECT_TRUE(both.ends_with("exit 125; }\nagent")) << both;
  auto failed = testing::RunCommand({"/bin/sh", "-c", WithSidecar("exit 3", "echo agent ran")});
  EXPECT_EQ(failed.exit_code, 125);
  EXPECT_EQ(failed.out, "");
  EXPECT_NE(failed.err.find("the --sidecar command exited 3"), std::string::npos) << failed.err;
  auto ok = testing::RunCommand({"/bin/sh", "-c", WithSidecar("true", "echo agent ran")});
  EXPECT_EQ(ok.out, "agent ran\n");
}

}  // namespace
}  // namespace fbkit::agents
