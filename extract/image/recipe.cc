#include "extract/image/recipe.h"

#include <nlohmann/json.hpp>

#include <map>

#include "extract/taskdir/task_dir.h"
#include "runner/confine.h"
#include "runner/git.h"
#include "runner/spec.h"
#include "util/hash.h"
#include "util/json_read.h"
#include "util/strings.h"

namespace fbkit::extract::image {

namespace {

// A recipe's files (context-relative path -> bytes), written and hashed together.
using Files = std::map<std::string, std::string>;

const char kHeader[] = "# fbkit.images/1 (written by fb-extract images; every byte is deterministic)\n";

// A Dockerfile RUN in exec form: the shell command as one JSON string (no escaping of the
// Dockerfile's own to get wrong).
std::string Run(const std::string& command) {
  return "RUN [\"/bin/sh\", \"-c\", " + nlohmann::json(command).dump() + "]\n";
}

// The tag of a recipe: its name and the hash of its files' names and bytes.
std::string Tag(const std::string& name, const Files& files) {
  std::string all;
  for (const auto& [path, bytes] : files) {
    all += path + '\0' + std::to_string(bytes.size()) + '\0' + bytes;
  }
  return name + ":" + util::Sha256Hex(all).substr(0, 16);
}

util::Status WriteRecipe(util::Env& env, const std::string& dir, const Files& files) {
  (void)env.RemoveAll(dir);
  for (const auto& [path, bytes] : files) {
    std::string dst = util::JoinPath(dir, path);
    if (auto s = env.MakeDirs(util::DirName(dst)); !s.ok()) return s;
    if (auto s = env.WriteFileAtomic(dst, bytes); !s.ok()) return util::Error{dst + ": " + s.error()};
  }
  return util::Status::Ok();
}

// The bytes of `git archive` of HEAD of `repo` (deterministic for one commit).
util::Expected<std::string> Archive(util::Env& env, runner::Git& git, const std::string& repo,
                                    const std::string& work, const std::string& name) {
  std::string out = util::JoinPath(work, name);
  if (auto r = git.Run(repo, {"archive", "--format=tar", "-o", out, "HEAD"}); !r.ok()) {
    return r.failure();
  }
  auto bytes = env.ReadFile(out);
  (void)env.RemoveAll(out);
  return bytes;
}

// What a commit of the pre-solved tree is made of, to make the very same commit again.
struct CommitFacts {
  std::string sha, branch, author, author_email, author_date, committer, committer_email,
      committer_date, message;
  std::vector<std::string> tags;
};

util::Expected<CommitFacts> ReadCommit(runner::Git& git, const std::string& repo) {
  auto raw = git.Run(repo, {"cat-file", "commit", "HEAD"});
  auto sha = git.Run(repo, {"rev-parse", "HEAD"});
  auto branch = git.Run(repo, {"symbolic-ref", "--short", "HEAD"});
  auto tags = git.Run(repo, {"tag", "--points-at", "HEAD"});
  for (const auto* r : {&raw, &sha, &branch, &tags}) {
    if (!r->ok()) return util::Error{r->error()};
  }
  CommitFacts f;
  f.sha = util::Trim(*sha);
  f.branch = util::Trim(*branch);
  for (const auto& t : util::Split(util::Trim(*tags), '\n')) {
    if (!t.empty()) f.tags.push_back(t);
  }
  size_t blank = raw->find("\n\n");
  if (blank == std::string::npos) return util::Error{"HEAD is a commit without a message"};
  f.message = raw->substr(blank + 2);
  // "author NAME <EMAIL> SECONDS ZONE"
  for (const auto& line : util::Split(raw->substr(0, blank), '\n')) {
    bool author = line.starts_with("author "), committer = line.starts_with("committer ");
    if (!author && !committer) continue;
    std::string rest = line.substr(line.find(' ') + 1);
    size_t lt = rest.find(" <"), gt = rest.rfind("> ");
    if (lt == std::string::npos || gt == std::string::npos) return util::Error{"cannot read: " + line};
    std::string name = rest.substr(0, lt), email = rest.substr(lt + 2, gt - lt - 2),
                date = rest.substr(gt + 2);
    if (author) f.author = name, f.author_email = email, f.author_date = date;
    if (committer) f.committer = name, f.committer_email = email, f.committer_date = date;
  }
  return f;
}

std::string Quote(const std::string& s) { return util::ShellQuote(s); }

// The shell that makes presolved/'s one commit again from the tree ADDed at `dir` (its
// message in `message_file`, removed), and checks that it is the very commit (the same tree,
// message, author and dates) with its tags.
std::string RecommitCommand(const CommitFacts& c, const std::string& dir, const std::string& message_file) {
  std::string cmd = "cd " + dir + " && git init -q -b " + Quote(c.branch) + " . && git add -A -f && " +
                    "GIT_AUTHOR_NAME=" + Quote(c.author) + " GIT_AUTHOR_EMAIL=" + Quote(c.author_email) +
                    " GIT_AUTHOR_DATE=" + Quote(c.author_date) + " GIT_COMMITTER_NAME=" +
                    Quote(c.committer) + " GIT_COMMITTER_EMAIL=" + Quote(c.committer_email) +
                    " GIT_COMMITTER_DATE=" + Quote(c.committer_date) +
                    " git -c commit.gpgsign=false commit -q --no-verify --cleanup=verbatim"
                    " -F " + message_file;
  for (const auto& t : c.tags) cmd += " && git tag " + Quote(t);
  cmd += " && rm " + message_file;
  cmd += " && test \"$(git rev-parse HEAD)\" = " + c.sha + " || { echo 'fbkit: " + dir +
         " is not the commit of presolved/ (" + c.sha + ")' >&2; exit 1; }";
  return cmd;
}

// The environment's shell commands, in order (each a RUN of a Dockerfile, or a line of a
// verifier's script): the base checked, the install steps in /fbkit/src (when the tree is
// there), what they built listed, /fbkit/python made the tests' interpreter.
// With the tree, /fbkit/src is presolved/'s commit again first, as fbkit's environment copy
// has the repository's history: install steps that ask git for a version (setuptools-scm,
// hatch-vcs) find its tag.
std::vector<std::string> EnvCommands(const runner::RepoSpec& spec, bool has_tree, const CommitFacts& commit) {
  std::vector<std::string> c;
  c.push_back("command -v \"$PYTHON\" >/dev/null && command -v git >/dev/null || { echo \"fbkit: the "
              "base image needs the spec's interpreter ($PYTHON) and git\" >&2; exit 1; }");
  if (has_tree) {
    c.push_back(RecommitCommand(commit, "/fbkit/src", "/fbkit/src-commit-message.txt"));
    for (const auto& step : spec.install) c.push_back("cd /fbkit/src || exit 1\n" + step);
    // fbkit's BuiltFiles: extension and generated modules the tree did not have.
    c.push_back("cd /fbkit/src && find . -type f \\( -name '*.so' -o -name '*.pyd' -o -name '*.py' \\) "
                "! -path './build/*' | sed 's|^\\./||' | LC_ALL=C sort > /fbkit/all-modules.txt && "
                "LC_ALL=C comm -23 /fbkit/all-modules.txt /fbkit/tree.txt > /fbkit/built-files.txt && "
                "rm /fbkit/all-modules.txt");
  } else {
    c.push_back("mkdir -p /fbkit && : > /fbkit/built-files.txt");
  }
  // /fbkit/python execs the interpreter (a link would not do: a venv's python finds its
  // pyvenv.cfg beside the path it was started by, so a link elsewhere runs outside the venv).
  c.push_back("chmod 755 /fbkit/pytest.sh && if [ -x /fbkit/env/bin/python ]; then py=/fbkit/env/bin/python; "
              "else py=$(command -v \"$PYTHON\"); fi && printf '#!/bin/sh\\nexec %s \"$@\"\\n' \"$py\" > "
              "/fbkit/python && chmod 755 /fbkit/python && /fbkit/python -m pytest --version");
  // Agents and graders may run as another user than the one that made /testbed.
  c.push_back("git config --system --add safe.directory '*'");
  return c;
}

std::string EnvVariables(const runner::RepoSpec& spec) {
  return "FBKIT_ENV=/fbkit/env FBKIT_SRC=/fbkit/src PYTHON=" + Quote(spec.python);
}

// The environment's Dockerfile lines after its FROM.
std::string EnvBody(const runner::RepoSpec& spec, bool has_tree, const CommitFacts& commit) {
  std::string d = "ENV FBKIT_ENV=/fbkit/env FBKIT_SRC=/fbkit/src PYTHON=" +
                  nlohmann::json(spec.python).dump() + "\n";
  d += "COPY pytest.sh /fbkit/pytest.sh\n";
  if (has_tree) {
    d += "ADD src.tar /fbkit/src/\n";
    d += "COPY tree.txt src-commit-message.txt /fbkit/\n";
  }
  for (const auto& c : EnvCommands(spec, has_tree, commit)) d += Run(c);
  d += "WORKDIR /testbed\n";
  return d;
}

std::string EnvDockerfile(const std::string& from, const std::string& repo, const runner::RepoSpec& spec,
                          bool has_tree, const CommitFacts& commit) {
  std::string d = kHeader;
  d += "# The environment of " + repo + ": the spec's interpreter and install steps, run as\n"
       "# fbkit runs them, in a copy of the pre-solved tree (/fbkit/src).\n";
  d += "FROM " + from + "\n";
  return d + EnvBody(spec, has_tree, commit);
}

// An L1 task image's lines after its FROM (the commit's RUN lines need its facts).
std::string Level1Body(const CommitFacts& commit) {
  return "ADD testbed.tar /testbed/\nCOPY commit-message.txt /fbkit/commit-message.txt\n"
         "WORKDIR /testbed\n" +
         Run(RecommitCommand(commit, kImageTestbed, "/fbkit/commit-message.txt")) +
         Run(CopyBuiltCommand(kImageTestbed));
}

std::string Level1Dockerfile(const std::string& from, const std::string& id, const CommitFacts& commit) {
  std::string d = kHeader;
  d += "# The image an agent works on " + id + " in: the pre-solved tree at /testbed as its one\n"
       "# commit (that of the task's presolved/), what the install steps built beside it.\n";
  d += "FROM " + from + "\n";
  return d + Level1Body(commit);
}

const char kLevel2Body[] =
    "mkdir -p /testbed && cd /testbed && git init -q -b main . && GIT_AUTHOR_NAME=fbkit "
    "GIT_AUTHOR_EMAIL=fbkit@localhost GIT_AUTHOR_DATE='946684800 +0000' GIT_COMMITTER_NAME=fbkit "
    "GIT_COMMITTER_EMAIL=fbkit@localhost GIT_COMMITTER_DATE='946684800 +0000' git -c "
    "commit.gpgsign=false commit -q --no-verify --allow-empty -m 'fbkit: empty project'";

// FeatureBench's harness restores /root/my_repo over /testbed, masks it with the row's patch
// (L1) or installs the agent's project with `pip install .` first (L2), and runs `source
// ~/.bashrc`, `conda activate testbed` and the row's test_cmd (/fbkit/pytest.sh) there: the
// original tree (pre-solved + gold + the F2P file) in both places, a .bashrc, and a conda
// whose `activate` puts kFeatureBenchBin first on PATH (its `pip install .`: FeatureBenchPip).
std::string FeatureBenchDockerfile(const std::string& from, const std::string& id) {
  std::string d = kHeader;
  d += "# FeatureBench's grading image of " + id + " (and of its L2 sibling): the original\n"
       "# repository at /testbed and /root/my_repo, as its `fb eval` expects. It holds the\n"
       "# answer: never an agent's image.\n";
  d += "FROM " + from + "\nADD testbed.tar /testbed/\nCOPY gold.diff test.diff /fbkit/featurebench/\n";
  d += Run("cd /testbed && git apply --whitespace=nowarn /fbkit/featurebench/gold.diff && git apply "
           "--whitespace=nowarn /fbkit/featurebench/test.diff && rm -rf /fbkit/featurebench");
  d += Run(CopyBuiltCommand(kImageTestbed));
  d += std::string("COPY pip ") + kFeatureBenchBin + "/pip\n";
  d += Run(std::string("chmod 755 ") + kFeatureBenchBin + "/pip && cp -a /testbed /root/my_repo && "
           "mkdir -p /opt/miniconda3/etc/profile.d && printf '%s\\n' "
           "'# fbkit: /fbkit/pytest.sh (the test_cmd) sets the environment up; activate puts the pip of fbkit first' "
           "'conda() { [ \"$1\" = activate ] && PATH=" + kFeatureBenchBin + ":$PATH && export PATH; return 0; }' "
           "> /opt/miniconda3/etc/profile.d/conda.sh && touch /root/.bashrc");
  return d + "WORKDIR /testbed\nENTRYPOINT []\nCMD [\"/bin/bash\"]\n";
}

// The `pip` of FeatureBench's activated environment: `pip install .` installs the project's
// agent_code package as fbkit's eval does (agent_code/ or src/agent_code/ copied onto the
// tests' path, whatever the project's setup files say); other commands are the interpreter's pip.
std::string FeatureBenchPip() {
  std::string py = kImagePython;
  return "#!/bin/sh\n"
         "# fbkit: FeatureBench's L2 step `pip install .` installs agent_code as fbkit's eval does.\n"
         "if [ \"$#\" -eq 2 ] && [ \"$1\" = install ] && [ \"$2\" = . ]; then\n"
         "  for d in agent_code src/agent_code; do\n"
         "    [ -f \"$d/__init__.py\" ] || continue\n"
         "    site=$(" + py + " -c 'import sysconfig; print(sysconfig.get_paths()[\"purelib\"])') || exit 1\n"
         "    mkdir -p \"$site\" && rm -rf \"$site/agent_code\" && cp -R \"$d\" \"$site/agent_code\" && exit 0\n"
         "    exit 1\n"
         "  done\n"
         "  echo \"fbkit: no agent_code/__init__.py nor src/agent_code/__init__.py in $(pwd)\" >&2\n"
         "  exit 1\n"
         "fi\n"
         "exec " + py + " -m pip \"$@\"\n";
}

std::string Level2Dockerfile(const std::string& from, const std::string& id) {
  std::string d = kHeader;
  d += "# The image an agent works on " + id + " in: an empty project at /testbed (one empty\n"
       "# commit) and the spec's interpreter; no tree of the repository in any layer.\n";
  d += "FROM " + from + "\n";
  return d + Run(kLevel2Body) + "WORKDIR /testbed\n";
}

}  // namespace

std::string CopyBuiltCommand(const std::string& tree) {
  return "[ -s /fbkit/built-files.txt ] || exit 0; cd /fbkit/src && while IFS= read -r f; do mkdir -p \"" +
         tree + "/$(dirname \"$f\")\" && cp -p \"$f\" \"" + tree + "/$f\"; done < /fbkit/built-files.txt";
}

std::string ImageNamePart(const std::string& name) {
  std::string out;
  for (char c : util::AsciiLower(name)) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    out += ok ? c : '-';
  }
  size_t start = out.find_first_not_of("._-");
  out = start == std::string::npos ? "x" : out.substr(start);
  while (!out.empty() && (out.back() == '.' || out.back() == '_' || out.back() == '-')) out.pop_back();
  return out.empty() ? "x" : out;
}

std::string PytestScript(const std::string& spec_json) {
  auto spec = runner::RepoSpecFromJson(spec_json);
  runner::RepoSpec s = spec.ok() ? *spec : runner::RepoSpec{};
  std::string sh = "#!/bin/sh\n";
  sh += "# fbkit.images/1: the task's tests as fbkit runs them (the spec's pythonpath, env and\n"
        "# pytest arguments) in the tree of the working directory; every outcome printed\n"
        "# (-rfEsxXp: -rA's lines without the captured output of passed tests, quadratic in pytest).\n";
  sh += "tree=$(pwd)\n";
  std::string path;
  for (const auto& p : s.pythonpath) {
    path += (path.empty() ? "" : ":") + (p.starts_with("/") ? Quote(p) : "\"$tree\"/" + Quote(p));
  }
  sh += "PYTHONPATH=" + (path.empty() ? std::string("") : path) + "${PYTHONPATH:+:$PYTHONPATH}\n";
  sh += "export PYTHONPATH PYTHONDONTWRITEBYTECODE=1 PYTHONHASHSEED=0\n";
  for (const auto& [name, value] : s.vars) {
    if (!runner::IsFbkitVariable(name)) sh += "export " + name + "=" + Quote(value) + "\n";
  }
  sh += std::string("exec ") + kImagePython + " -m pytest -rfEsxXp -p no:cacheprovider --color=no";
  for (const auto& a : s.pytest_args) sh += " " + Quote(a);
  sh += " \"$@\"\n";
  return sh;
}

namespace {

// What a task's recipes are made of: the environment's files (pytest.sh; with install steps
// the pre-solved tree as src.tar and its file list) and the L1 tree's (testbed.tar, the
// commit's message and facts).
struct Parts {
  taskdir::Instance inst;
  bool has_tree = false;
  Files env_files;  // without its Dockerfile
  Files task_files;
  CommitFacts commit;
};

util::Expected<Parts> ReadParts(util::Env& env, sandbox::Launcher& launcher, const std::string& given_dir,
                                const std::string& work) {
  auto real = env.RealPath(given_dir);
  if (!real.ok()) return util::Error{given_dir + ": " + real.error()};
  taskdir::TaskDir task{*real};
  auto inst = taskdir::ReadInstance(env, task);
  if (!inst.ok()) return inst.failure();
  taskdir::TaskDir level1 = task;
  if (inst->level == 2) {
    auto l1 = taskdir::Level1Task(env, task);
    if (!l1.ok()) return l1.failure();
    level1 = *l1;
    if (auto r1 = env.RealPath(level1.dir); r1.ok()) level1.dir = *r1;
  }
  auto presolved = taskdir::PlainPresolved(env, level1);
  if (!presolved.ok()) return presolved.failure();
  (void)env.RemoveAll(work);
  if (auto s = env.MakeDirs(work); !s.ok()) return util::Error{work + ": " + s.error()};
  runner::GitProgram git(env, launcher, util::JoinPath(work, "log"));
  git.Confine(runner::ToolSandbox(runner::RepoSpec{}, {work}, {task.dir, level1.dir}));
  Parts p;
  p.inst = std::move(*inst);
  p.has_tree = !p.inst.spec.install.empty() || p.inst.level == 2;
  p.env_files["pytest.sh"] = PytestScript(p.inst.spec_json);
  if (p.has_tree) {
    auto tar = Archive(env, git, *presolved, work, "src.tar");
    if (!tar.ok()) return util::Error{"presolved/: " + tar.error()};
    auto listed = git.Run(*presolved, {"ls-files", "-z"});
    if (!listed.ok()) return util::Error{"presolved/: " + listed.error()};
    std::vector<std::string> paths;
    for (auto path : util::Records(*listed, '\0')) {
      if (!path.empty()) paths.emplace_back(path);
    }
    std::sort(paths.begin(), paths.end());
    std::string tree;
    for (const auto& path : paths) tree += path + "\n";
    p.env_files["src.tar"] = std::move(*tar);
    p.env_files["tree.txt"] = tree;
  }
  auto commit = ReadCommit(git, *presolved);
  if (!commit.ok()) return util::Error{"presolved/: " + commit.error()};
  p.commit = *commit;
  if (p.has_tree) p.env_files["src-commit-message.txt"] = commit->message;
  if (p.inst.level == 1) {
    auto tar = Archive(env, git, *presolved, work, "testbed.tar");
    if (!tar.ok()) return util::Error{"presolved/: " + tar.error()};
    p.task_files["testbed.tar"] = std::move(*tar);
    p.task_files["commit-message.txt"] = commit->message;
  }
  (void)env.RemoveAll(work);
  return p;
}

// The base recipe's lines after its FROM.
std::string BaseBody() {
  return Run("apt-get update && apt-get install -y --no-install-recommends bash ca-certificates git patch "
             "procps python3 python3-venv python3-pip python3-pytest tar && rm -rf /var/lib/apt/lists/*") +
         "WORKDIR /testbed\n";
}

}  // namespace

util::Expected<Recipe> WriteBaseRecipe(util::Env& env, const RecipeOptions& options) {
  Files files;
  files["Dockerfile"] = std::string(kHeader) + "# fbkit's base: Debian 12 with what fbkit's specs assume of the system.\n" +
                        "FROM " + kDebianBase + "\n" + BaseBody();
  Recipe r{util::JoinPath(options.out_dir, "base"), Tag(options.prefix + "/base", files), true};
  if (auto s = WriteRecipe(env, r.dir, files); !s.ok()) return s.failure();
  return r;
}

util::Expected<TaskRecipes> WriteTaskRecipes(util::Env& env, sandbox::Launcher& launcher,
                                             const std::string& given_dir, const std::string& from,
                                             const RecipeOptions& options) {
  auto parts = ReadParts(env, launcher, given_dir, options.work_dir);
  if (!parts.ok()) return parts.failure();
  const taskdir::Instance& inst = parts->inst;
  TaskRecipes out;
  out.instance_id = inst.instance_id;
  out.level = inst.level;
  // An L2 task's environment is its grader's (from its L1 sibling's tree); an L1 task's
  // needs the tree only when install steps run in it.
  Files env_files = parts->env_files;
  bool env_tree = !inst.spec.install.empty();
  if (!env_tree) env_files.erase("src.tar"), env_files.erase("tree.txt"), env_files.erase("src-commit-message.txt");
  env_files["Dockerfile"] = EnvDockerfile(from, inst.repo, inst.spec, env_tree, parts->commit);
  std::string repo_part = ImageNamePart(inst.spec.repo.empty() ? inst.repo : inst.spec.repo);
  out.environment.tag = Tag(options.prefix + "/env-" + repo_part, env_files);
  out.environment.dir = util::JoinPath(
      options.out_dir, "env/" + out.environment.tag.substr(out.environment.tag.rfind(':') + 1));
  out.environment.network = runner::InstallNetwork(inst.spec);
  if (auto s = WriteRecipe(env, out.environment.dir, env_files); !s.ok()) return s.failure();
  Files task_files = parts->task_files;
  task_files["Dockerfile"] = inst.level == 1
                                 ? Level1Dockerfile(out.environment.tag, out.instance_id, parts->commit)
                                 : Level2Dockerfile(from, out.instance_id);
  out.task.tag = Tag(options.prefix + "/task-" + ImageNamePart(out.instance_id), task_files);
  out.task.dir = util::JoinPath(options.out_dir, "task/" + out.instance_id);
  if (auto s = WriteRecipe(env, out.task.dir, task_files); !s.ok()) return s.failure();
  if (options.featurebench && inst.level == 1) {
    Files fb;
    fb["testbed.tar"] = parts->task_files.at("testbed.tar");
    fb["gold.diff"] = inst.patch;
    fb["test.diff"] = inst.test_patch;
    fb["pip"] = FeatureBenchPip();
    fb["Dockerfile"] = FeatureBenchDockerfile(out.environment.tag, out.instance_id);
    out.featurebench.tag = Tag(options.prefix + "/featurebench-" + ImageNamePart(out.instance_id), fb);
    out.featurebench.dir = util::JoinPath(options.out_dir, "featurebench/" + out.instance_id);
    if (auto s = WriteRecipe(env, out.featurebench.dir, fb); !s.ok()) return s.failure();
  } else if (options.featurebench) {
    // An L2 task is graded in its L1 sibling's image (the same original tree and environment).
    auto l1 = taskdir::Level1Task(env, taskdir::TaskDir{given_dir});
    if (!l1.ok()) return l1.failure();
    auto sibling = WriteTaskRecipes(env, launcher, l1->dir, from, options);
    if (!sibling.ok()) return util::Error{l1->dir + ": " + sibling.error()};
    out.featurebench = sibling->featurebench;
  }
  return out;
}

util::Expected<OneContext> WriteOneContext(util::Env& env, sandbox::Launcher& launcher,
                                           const std::string& task_dir, const std::string& base,
                                           const std::string& dir, const std::string& work_dir) {
  auto parts = ReadParts(env, launcher, task_dir, work_dir);
  if (!parts.ok()) return parts.failure();
  const taskdir::Instance& inst = parts->inst;
  std::string d = std::string(kHeader) + "# The image an agent works on " + inst.instance_id + " in, from one context.\n";
  d += "FROM " + (base.empty() ? std::string(kDebianBase) : base) + "\n";
  if (base.empty()) d += BaseBody();
  Files files;
  OneContext out;
  out.network = runner::InstallNetwork(inst.spec);
  if (inst.level == 1) {
    bool tree = !inst.spec.install.empty();
    files = parts->task_files;
    files["pytest.sh"] = parts->env_files["pytest.sh"];
    if (tree) {
      for (const char* name : {"src.tar", "tree.txt", "src-commit-message.txt"}) files[name] = parts->env_files[name];
    }
    d += EnvBody(inst.spec, tree, parts->commit) + Level1Body(parts->commit);
  } else {
    // The agent's image holds nothing of the repository: the grader builds the environment
    // and the original tree from the verifier's files (VerifierScript).
    d += Run(kLevel2Body) + "WORKDIR /testbed\n";
    out.verifier_files = parts->env_files;
    out.verifier_script = "export " + EnvVariables(inst.spec) + "\n" +
                          "mkdir -p /fbkit/src && tar -xf /tests/src.tar -C /fbkit/src && "
                          "cp /tests/tree.txt /tests/pytest.sh /tests/src-commit-message.txt /fbkit/ || exit 1\n";
    for (const auto& c : EnvCommands(inst.spec, true, parts->commit)) out.verifier_script += "( " + c + "\n) || exit 1\n";
  }
  files["Dockerfile"] = d + "ENTRYPOINT []\nCMD [\"/bin/bash\"]\n";
  if (auto s = WriteRecipe(env, dir, files); !s.ok()) return s.failure();
  out.dir = dir;
  out.instance = parts->inst;
  return out;
}

}  // namespace fbkit::extract::image
