#include "groundtruth/ablation.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "util/patch.h"
#include "groundtruth/paths.h"
#include "runner/confine.h"
#include "runner/git.h"
#include "util/json_writer.h"

namespace fbkit::groundtruth {
namespace {

using Span = std::pair<size_t, size_t>;

// The first parse error of `source` as "line N", or "" when it parses.
std::string ParseProblem(parser::PythonParser& parser, const std::string& path,
                         const std::string& source) {
  auto table = parser.Parse(path, "", source);
  if (table.parse_errors.empty()) return "";
  return "line " + std::to_string(table.parse_errors[0].line);
}

// [start, end) widened to whole lines when only whitespace precedes the start.
Span LineSpan(const std::string& s, size_t start, size_t end, std::string* indent) {
  size_t ls = s.rfind('\n', start == 0 ? 0 : start - 1);
  ls = (start == 0 || ls == std::string::npos) ? 0 : ls + 1;
  if (s.find_first_not_of(" \t", ls) >= start) {
    *indent = s.substr(ls, start - ls);
    start = ls;
  }
  if (end < s.size() && s[end] == '\n') ++end;
  return {start, end};
}

util::Expected<std::string> Checked(parser::PythonParser& parser, const std::string& path,
                                    std::string out) {
  std::string problem = ParseProblem(parser, path, out);
  if (!problem.empty()) return util::Error{"unparsable after the revert (" + problem + ")"};
  return out;
}

// Whether the code line before `at` opens a block (ends with ':') and the next code line
// from `at` is indented less than `width` (or there is none): removing left it empty.
bool EmptiesBlock(const std::string& s, size_t at, size_t width) {
  size_t p = at;
  while (p > 0 && std::isspace(static_cast<unsigned char>(s[p - 1]))) --p;
  if (p == 0 || s[p - 1] != ':') return false;
  for (size_t ls = at; ls < s.size();) {
    size_t le = s.find('\n', ls);
    if (le == std::string::npos) le = s.size();
    size_t first = s.find_first_not_of(" \t", ls);
    if (first < le && s[first] != '#' && s[first] != '\r') return first - ls < width;
    ls = le + 1;
  }
  return true;
}

util::Expected<std::string> RemoveNew(parser::PythonParser& parser, const FileVersions& file,
                                      const EntityChange& c) {
  const std::string& after = *file.after;
  std::string indent;
  auto [b, e] = LineSpan(after, static_cast<size_t>(c.after_start),
                         static_cast<size_t>(c.after_end), &indent);
  std::string cut = after.substr(0, b) + after.substr(e);
  if (!EmptiesBlock(cut, b, indent.size())) return Checked(parser, file.path, cut);
  return Checked(parser, file.path, after.substr(0, b) + indent + "pass\n" + after.substr(e));
}

// The byte where a deleted entity goes back: after its previous sibling that survived,
// else at the end of its surviving parent class, else (module level) at the end.
util::Expected<size_t> Anchor(parser::PythonParser& parser, const FileVersions& file,
                              const EntityChange& c) {
  auto before = parser.Parse(file.path, "", *file.before);
  auto after = parser.Parse(file.path, "", *file.after);
  std::map<std::string, const parser::Entity*> in_after;
  for (const auto& e : after.entities) in_after[e.id] = &e;
  auto self = std::find_if(before.entities.begin(), before.entities.end(),
                           [&](const parser::Entity& e) { return e.id == c.entity; });
  if (self == before.entities.end()) return util::Error{"entity not found before the patch"};
  for (auto it = self; it != before.entities.begin();) {
    --it;
    if (it->parent == self->parent && in_after.count(it->id)) {
      return static_cast<size_t>(in_after[it->id]->end_byte);
    }
  }
  auto parent = in_after.find(self->parent);
  if (parent == in_after.end()) return util::Error{"its parent no longer exists"};
  if (parent->second->kind == parser::EntityKind::kModule) return file.after->size();
  return static_cast<size_t>(parent->second->end_byte);
}

util::Expected<std::string> Reinsert(parser::PythonParser& parser, const FileVersions& file,
                                     const EntityChange& c) {
  if (!file.after) return util::Error{"the file is deleted"};
  auto at = Anchor(parser, file, c);
  if (!at.ok()) return at.failure();
  std::string indent;
  const std::string& before = *file.before;
  (void)LineSpan(before, static_cast<size_t>(c.before_start), static_cast<size_t>(c.before_end),
                 &indent);
  std::string text = indent + before.substr(static_cast<size_t>(c.before_start),
                                            static_cast<size_t>(c.before_end - c.before_start));
  bool at_end = *at == file.after->size();
  std::string out = file.after->substr(0, *at);
  if (at_end && !out.empty() && out.back() != '\n') out += "\n";
  out += "\n\n" + text + (at_end ? "\n" : "") + file.after->substr(*at);
  return Checked(parser, file.path, out);
}

// First F2P id that does not pass in `repo` ("" when all pass). `by_id` runs only the F2P
// tests (pytest node ids), else their whole files; when a node-id run does not report every
// F2P test (pytest runs nothing when one id cannot be collected, e.g. its module no longer
// imports) the whole files run, so that the failing test named is the one that fails.
util::Expected<std::string> FirstFailing(util::Env& env, runner::TestRunner& tests,
                                         const std::string& repo, const std::string& env_root,
                                         const runner::RepoSpec& spec,
                                         const Instance& instance,
                                         const std::vector<std::string>& f2p,
                                         const std::string& work_dir, bool by_id) {
  std::set<std::string> files;
  for (const auto& id : f2p) files.insert(by_id ? id : id.substr(0, id.find("::")));
  auto o = TestOutcomes(env, tests, repo, env_root, spec, instance.pythonpath,
                        {files.begin(), files.end()}, work_dir);
  if (!o.ok() && !by_id) return util::Error{"pytest: " + o.error()};
  bool complete = o.ok();
  for (const auto& id : f2p) complete = complete && o->count(id);
  if (by_id && !complete) {
    return FirstFailing(env, tests, repo, env_root, spec, instance, f2p, work_dir, false);
  }
  for (const auto& id : f2p) {
    auto it = o->find(id);
    if (it == o->end() || it->second != runner::Outcome::kPassed) return id;
  }
  return std::string();
}

struct Ctx {
  util::Env& env;
  sandbox::Launcher& launcher;
  runner::TestRunner& tests;
  parser::PythonParser& parser;
  const Instance& instance;
  const runner::RepoSpec& spec;
  const std::vector<std::string>& f2p;
  std::string repo;
  std::string runs;
  std::string env_root;  // EnvironmentSource
  bool by_id = false;  // the F2P tests pass alone on the gold checkout: run only them
};

Ablation Judge(Ctx& c, const std::string& target) {
  auto failing =
      FirstFailing(c.env, c.tests, c.repo, c.env_root, c.spec, c.instance, c.f2p, c.runs, c.by_id);
  if (!failing.ok()) {
    // pytest ran with the gold patch (checked first), so the revert is what stops it (e.g.
    // a conftest import fails): the F2P tests do not pass.
    std::string why = failing.error();
    if (auto nl = why.find('\n'); nl != std::string::npos) why.resize(nl);
    return {target, Verdict::kNecessary, "the F2P tests cannot run: " + why};
  }
  if (failing->empty()) return {target, Verdict::kNotNecessary, ""};
  return {target, Verdict::kNecessary, "F2P " + *failing + " fails"};
}

// When no file is necessary alone but the F2P tests need the change (they fail at the base),
// the changes are redundant: each file that makes the F2P tests pass with every other
// not-necessary file reverted is sufficient alone, and counts as necessary. False when the
// checkout could not be restored.
bool RedundantFiles(Ctx& c, runner::Git& git, const std::vector<util::FilePatch>& files,
                    Localization* l) {
  std::vector<size_t> candidates;  // indices into l->files
  for (size_t i = 0; i < l->files.size(); ++i) {
    if (l->files[i].verdict == Verdict::kNecessary) return true;
    if (l->files[i].verdict == Verdict::kNotNecessary) candidates.push_back(i);
  }
  if (candidates.size() < 2) return true;
  std::map<std::string, const util::FilePatch*> by_path;
  for (const auto& f : files) by_path[f.path()] = &f;
  std::vector<bool> sufficient(candidates.size());
  for (size_t k = 0; k < candidates.size(); ++k) {
    std::vector<const util::FilePatch*> reverted;
    bool applies = true;
    for (size_t o = 0; o < candidates.size() && applies; ++o) {
      if (o == k) continue;
      const util::FilePatch* f = by_path[l->files[candidates[o]].target];
      applies = git.Apply(c.repo, f->text, true).ok();
      if (applies) reverted.push_back(f);
    }
    if (applies) {
      sufficient[k] = Judge(c, l->files[candidates[k]].target).verdict == Verdict::kNotNecessary;
    }
    for (const util::FilePatch* f : reverted) {
      if (!git.Apply(c.repo, f->text).ok()) return false;
    }
  }
  for (size_t k = 0; k < candidates.size(); ++k) {
    if (!sufficient[k]) continue;
    l->files[candidates[k]].verdict = Verdict::kNecessary;
    l->files[candidates[k]].reason =
        "sufficient alone: no single revert breaks the F2P tests (redundant changes)";
  }
  return true;
}

// Reverts one gold-patch file section, judges, restores; false when restoring failed.
bool AblateFile(Ctx& c, runner::Git& git, const util::FilePatch& f, Localization* l) {
  const std::string& path = f.path();
  Ablation a{path, Verdict::kUnknown, ""};
  if (auto s = git.Apply(c.repo, f.text, true); !s.ok()) {
    a.reason = "the revert does not apply";
    l->files.push_back(a);
    return true;
  }
  std::string rel = f.old_path.empty() ? path : f.old_path;
  auto text = path.ends_with(".py") ? c.env.ReadUntrusted(c.repo, rel, util::kMaxTreeFileBytes)
                                    : util::Expected<std::string>(util::Error{""});
  std::string problem = text.ok() ? ParseProblem(c.parser, path, *text) : "";
  a = problem.empty() ? Judge(c, path)
                      : Ablation{path, Verdict::kUnknown, "unparsable after the revert (" + problem + ")"};
  l->files.push_back(a);
  return git.Apply(c.repo, f.text).ok();
}

void AblateEntities(Ctx& c, const std::vector<FileVersions>& versions, const ChangeSet& set,
                    Localization* l) {
  std::map<std::string, const FileVersions*> by_path;
  for (const auto& v : versions) by_path[v.path] = &v;
  for (const auto& ch : set.entities) {
    if (ch.change == Change::kCosmetic || IsTestPath(ch.file)) continue;
    const FileVersions& fv = *by_path.at(ch.file);
    auto reverted = RevertEntity(c.parser, fv, ch);
    Ablation a{ch.entity, Verdict::kUnknown, ""};
    std::string full = util::JoinPath(c.repo, ch.file);
    if (!reverted.ok()) {
      a.reason = reverted.error();
    } else if (auto s = c.env.WriteFileAtomic(full, *reverted); !s.ok()) {
      a.reason = s.error();
    } else {
      a = Judge(c, ch.entity);
      (void)c.env.WriteFileAtomic(full, *fv.after);
    }
    l->entities.push_back(a);
  }
}

void BuildTasks(const ChangeSet& set, Localization* l) {
  std::map<std::string, std::string> verdicts;
  for (const auto& a : l->entities) {
    verdicts[a.target] = a.verdict == Verdict::kNecessary       ? "true"
                         : a.verdict == Verdict::kNotNecessary ? "false"
                                                        : "unknown";
  }
  for (const auto& ch : set.entities) {
    if (ch.change == Change::kCosmetic || IsTestPath(ch.file)) continue;
    GtTask t;
    t.entity = ch.entity, t.file = ch.file, t.change = ChangeName(ch.change), t.kind = ch.kind;
    t.old_entity = ch.old_entity;
    auto it = verdicts.find(ch.entity);
    t.necessary = it == verdicts.end() ? "unknown" : it->second;
    l->tasks.push_back(std::move(t));
  }
}

}  // namespace

util::Expected<std::string> RevertEntity(parser::PythonParser& parser, const FileVersions& file,
                                         const EntityChange& c) {
  if (!file.after) return util::Error{"the file is deleted"};
  if (c.change == Change::kNew) return RemoveNew(parser, file, c);
  if (c.change == Change::kDeleted) return Reinsert(parser, file, c);
  const std::string& a = *file.after;
  std::string out = a.substr(0, static_cast<size_t>(c.after_start)) +
                    file.before->substr(static_cast<size_t>(c.before_start),
                                        static_cast<size_t>(c.before_end - c.before_start)) +
                    a.substr(static_cast<size_t>(c.after_end));
  return Checked(parser, file.path, out);
}

namespace {

// Whether the F2P tests are run by id (they pass alone on the gold checkout) or as whole
// files (ids pytest cannot select, or tests that need their file's other tests first); ""
// when the gold checkout passes them, else why not.
std::string ChooseSelection(Ctx& c, bool whole_files) {
  if (!whole_files) {
    auto alone = TestOutcomes(c.env, c.tests, c.repo, c.env_root, c.spec, c.instance.pythonpath,
                              c.f2p, c.runs);
    c.by_id = alone.ok();
    for (const auto& id : c.f2p) {
      c.by_id = c.by_id && alone->count(id) && alone->at(id) == runner::Outcome::kPassed;
    }
  }
  if (c.by_id) return "";
  auto base = FirstFailing(c.env, c.tests, c.repo, c.env_root, c.spec, c.instance, c.f2p,
                           c.runs, false);
  if (!base.ok()) return base.error();
  if (!base->empty()) return "F2P " + *base + " does not pass with the gold patch";
  return "";
}

// Each file of the gold patch ablated (tests and documentation set aside), then the
// redundant ones found; "" when the checkout could be restored after each, else why not.
std::string AblateGoldFiles(Ctx& c, runner::Git& git, std::vector<util::FilePatch> files,
                            Localization* l) {
  std::sort(files.begin(), files.end(),
            [](const util::FilePatch& a, const util::FilePatch& b) { return a.path() < b.path(); });
  for (const auto& f : files) {
    if (IsTestPath(f.path())) {
      l->test.push_back(f.path());
    } else if (IsDocPath(f.path())) {
      l->files.push_back({f.path(), Verdict::kOther, "documentation"});
    } else if (!AblateFile(c, git, f, l)) {
      return "cannot restore " + f.path() + " after its ablation";
    }
  }
  if (!RedundantFiles(c, git, files, l)) return "cannot restore the checkout after a joint revert";
  for (const auto& a : l->files) {
    (a.verdict == Verdict::kNecessary ? l->necessary
     : a.verdict == Verdict::kUnknown ? l->unknown
                              : l->other)
        .push_back(a.target);
  }
  std::sort(l->test.begin(), l->test.end());
  l->test.erase(std::unique(l->test.begin(), l->test.end()), l->test.end());
  return "";
}

}  // namespace

Localization Localize(const runner::Services& services,
                      parser::PythonParser& parser,
                      const Instance& instance, const runner::RepoSpec& spec,
                      const std::vector<std::string>& fail_to_pass, bool entities,
                      const std::string& work_dir, bool whole_files) {
  [[maybe_unused]] auto& [env, launcher, tests, git_maker] = services;
  Localization l;
  l.instance_id = instance.instance_id;
  auto fail = [&](const std::string& why) {
    l.error = why;
    (void)env.RemoveAll(work_dir);
    return l;
  };
  if (fail_to_pass.empty()) return fail("no FAIL_TO_PASS tests to ablate with");
  auto gold = util::ParsePatch(instance.patch);
  if (!gold.ok()) return fail("gold patch: " + gold.error());
  auto versions = PatchVersions(env, launcher, instance.repo, instance.base_commit, instance.patch,
                                util::JoinPath(work_dir, "versions"));
  if (!versions.ok()) return fail(versions.error());
  ChangeSet set = DiffEntities(parser, *versions);
  Ctx c{env,
        launcher,
        tests,
        parser,
        instance,
        spec,
        fail_to_pass,
        util::JoinPath(work_dir, "repo"),
        util::JoinPath(work_dir, "run"),
        ""};
  if (auto e = PrepareCheckout(env, launcher, instance, c.repo, true)) return fail(e->message);
  c.env_root =
      EnvironmentSource(env, launcher, instance, spec, util::JoinPath(work_dir, "env-source"));
  if (std::string why = ChooseSelection(c, whole_files); !why.empty()) return fail(why);
  auto git_ptr = runner::MakeGit(services, util::JoinPath(work_dir, "logs"));
  runner::Git& git = *git_ptr;
  // The tests have written the checkout: git over it runs sandboxed.
  git.Confine(runner::ToolSandbox(spec, {work_dir}, {instance.repo}));
  if (auto test_files = util::ParsePatch(instance.test_patch); test_files.ok()) {
    for (const auto& f : *test_files) l.test.push_back(f.path());
  }
  if (std::string why = AblateGoldFiles(c, git, *gold, &l); !why.empty()) return fail(why);
  if (entities) AblateEntities(c, *versions, set, &l);
  BuildTasks(set, &l);
  (void)env.RemoveAll(work_dir);
  return l;
}

std::string_view VerdictName(Verdict v) {
  switch (v) {
    case Verdict::kNecessary: return "necessary";
    case Verdict::kNotNecessary: return "not_necessary";
    case Verdict::kUnknown: return "unknown";
    case Verdict::kOther: return "other";
  }
  return "unknown";
}

std::string LocalizationJson(const Localization& l) {
  std::string out;
  util::JsonWriter w(&out);
  auto ablations = [&](const char* key, const std::vector<Ablation>& v) {
    w.Key(key), w.BeginArray();
    for (const auto& a : v) {
      w.BeginObject();
      w.Key("reason"), w.String(a.reason);
      w.Key("target"), w.String(a.target);
      w.Key("verdict"), w.String(VerdictName(a.verdict));
      w.EndObject();
    }
    w.EndArray();
  };
  w.BeginObject();
  ablations("entity_ablations", l.entities);
  if (!l.error.empty()) w.Key("error"), w.String(l.error);
  ablations("file_ablations", l.files);
  w.Key("files"), w.BeginObject();
  w.Key("necessary"), w.StringArray(l.necessary);
  w.Key("other"), w.StringArray(l.other);
  w.Key("test"), w.StringArray(l.test);
  w.Key("unknown"), w.StringArray(l.unknown);
  w.EndObject();
  w.Key("instance_id"), w.String(l.instance_id);
  w.Key("schema"), w.String("fbkit.race-files/1");
  w.Key("tasks"), WriteTasks(w, l.tasks);
  w.EndObject();
  return out + "\n";
}

}  // namespace fbkit::groundtruth
