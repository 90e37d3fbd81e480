#include "parser/entity_table.h"

#include <gtest/gtest.h>

#include "parser/entities_json.h"
#include "parser/source_files.h"
#include "tests/testing/fake_env.h"

namespace fbkit::parser {
namespace {

using testing::FakeEnv;

std::vector<std::string> Paths(const SourceTree& t) {
  std::vector<std::string> out;
  for (const auto& f : t.files) out.push_back(f.path + "=" + f.module);
  return out;
}

TEST(SourceFilesTest, ModulesSkipsAndOrder) {
  FakeEnv env;
  env.AddFile("/r/src/lib/__init__.py", "");
  env.AddFile("/r/src/lib/sub/__init__.py", "");
  env.AddFile("/r/src/lib/sub/deep.py", "");
  env.AddFile("/r/src/lib/ns/plain.py", "");  // no __init__: a namespace portion
  env.AddFile("/r/scripts/tool.py", "");       // no package above: top level
  env.AddFile("/r/a.py", "");
  env.AddFile("/r/a/b.py", "");
  env.AddFile("/r/tests/test_x.py", "");
  env.AddFile("/r/notes.txt", "");
  env.AddFile("/r/.git/hook.py", "");
  env.AddFile("/r/__pycache__/c.py", "");
  env.AddFile("/r/node_modules/n.py", "");
  env.AddFile("/r/env/pyvenv.cfg", "");
  env.AddFile("/r/env/lib/v.py", "");
  env.AddFile("/r/build/gen.py", "");
  env.AddFile("/r/docs/conf.py", "");
  auto tree = FindPythonFiles(env, "/r", {"build/*", "conf.py"});
  ASSERT_TRUE(tree.ok()) << tree.error();
  EXPECT_EQ(Paths(*tree),
            (std::vector<std::string>{"a.py=a", "a/b.py=b", "scripts/tool.py=tool",
                                      "src/lib/__init__.py=lib",
                                      "src/lib/ns/plain.py=lib.ns.plain", "src/lib/sub/__init__.py=lib.sub",
                                      "src/lib/sub/deep.py=lib.sub.deep",
                                      "tests/test_x.py=test_x"}));
}

TEST(SourceFilesTest, SymlinksFilesFollowedDirsNotDanglingReported) {
  FakeEnv env;
  env.AddFile("/r/real/mod.py", "");
  env.AddSymlink("/r/link.py", "real/mod.py");
  env.AddSymlink("/r/linkdir", "real");
  env.AddSymlink("/r/dangling.py", "nowhere.py");
  auto tree = FindPythonFiles(env, "/r", {});
  ASSERT_TRUE(tree.ok());
  EXPECT_EQ(Paths(*tree), (std::vector<std::string>{"link.py=link", "real/mod.py=mod"}));
  ASSERT_EQ(tree->errors.size(), 1u);
  EXPECT_EQ(tree->errors[0].path, "dangling.py");
  EXPECT_EQ(tree->errors[0].message.find("/r/"), std::string::npos) << tree->errors[0].message;
}

TEST(SourceFilesTest, ALinkToAFileOutsideTheTreeIsNotRead) {
  FakeEnv env;
  env.AddFile("/home/u/secret.py", "TOKEN = 1\n");
  env.AddFile("/r/real/mod.py", "");
  env.AddSymlink("/r/steal.py", "../home/u/secret.py");
  env.AddSymlink("/r/real/up.py", "../../home/u/secret.py");
  env.AddSymlink("/r/real/ok.py", "mod.py");
  auto tree = FindPythonFiles(env, "/r", {});
  ASSERT_TRUE(tree.ok());
  EXPECT_EQ(Paths(*tree), (std::vector<std::string>{"real/mod.py=mod", "real/ok.py=ok"}));
  ASSERT_EQ(tree->errors.size(), 2u);
  EXPECT_EQ(tree->errors[0].path, "real/up.py");
  EXPECT_NE(tree->errors[0].message.find("outside the tree"), std::string::npos);
  EXPECT_EQ(env.reads("/home/u/secret.py"), 0);
}

TEST(SourceFilesTest, RootMustBeADirectory) {
  FakeEnv env;
  env.AddFile("/r/file.py", "");
  EXPECT_FALSE(FindPythonFiles(env, "/missing", {}).ok());
  auto not_dir = FindPythonFiles(env, "/r/file.py", {});
  ASSERT_FALSE(not_dir.ok());
  EXPECT_NE(not_dir.error().find("not a directory"), std::string::npos);
}

TEST(SourceFilesTest, ExcludeGlobs) {
  EXPECT_TRUE(IsExcluded("build/x.py", {"build/*"}));
  EXPECT_TRUE(IsExcluded("a/b/gen_pb2.py", {"*_pb2.py"}));
  EXPECT_TRUE(IsExcluded("deep/docs", {"docs"}));
  EXPECT_FALSE(IsExcluded("src/build.py", {"build/*"}));
}

EntitiesResult Build(FakeEnv& env, std::optional<std::string> cache, int jobs = 2) {
  EntitiesOptions options;
  options.root = "/r";
  options.jobs = jobs;
  options.cache_dir = cache;
  auto r = BuildEntities(env, options, nullptr);
  EXPECT_TRUE(r.ok()) << r.error();
  return std::move(*r);
}

void AddRepo(FakeEnv& env) {
  env.AddFile("/r/pkg/__init__.py", "from .m import f\n");
  env.AddFile("/r/pkg/m.py", "def f():\n    return 1\n");
  env.AddFile("/r/bad.py", "def broken(:\n");
}

TEST(EntityTableTest, OneBadFileDoesNotStopTheOthers) {
  FakeEnv env;
  AddRepo(env);
  env.AddSymlink("/r/dangling.py", "gone.py");
  EntitiesResult r = Build(env, std::nullopt);
  EXPECT_EQ(r.fragments.size(), 3u);
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].path, "dangling.py");
  ASSERT_FALSE(r.diagnostics.empty());
  EXPECT_EQ(r.diagnostics[0].path, "bad.py");
  EXPECT_EQ(r.diagnostics[0].line, 1);
}

TEST(EntityTableTest, TooLargeFilesAreReportedNotParsed) {
  FakeEnv env;
  AddRepo(env);
  env.AddFile("/r/big.py", std::string(100, '#'));
  EntitiesOptions options;
  options.root = "/r";
  options.max_file_bytes = 50;
  auto r = BuildEntities(env, options, nullptr);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->errors.size(), 1u);
  EXPECT_EQ(r->errors[0].path, "big.py");
  EXPECT_NE(r->errors[0].message.find("too large"), std::string::npos);
}

TEST(EntityTableTest, OutputIsTheSameForAnyJobCount) {
  FakeEnv env;
  AddRepo(env);
  for (int i = 0; i < 40; ++i) {
    env.AddFile("/r/many/m" + std::to_string(i) + ".py", "def g" + std::to_string(i) + "(): pass\n");
  }
  auto doc = [&](int jobs) {
    EntitiesResult r = Build(env, std::nullopt, jobs);
    return EntitiesDocument("/r", r.fragments, r.errors);
  };
  EXPECT_EQ(doc(1), doc(4));
}

TEST(EntityTableTest, WarmRunReadsNoSourceAndGivesTheSameOutput) {
  FakeEnv env;
  AddRepo(env);
  EntitiesResult cold = Build(env, "/cache");
  EXPECT_EQ(cold.parsed, 3u);
  EXPECT_EQ(env.reads("/r/pkg/m.py"), 1);
  env.SetNow(env.NowNs() + 10'000'000'000);  // well past the racy window
  Build(env, "/cache");                        // writes a manifest whose stats are trusted
  int reads = env.reads("/r/pkg/m.py");
  EntitiesResult warm = Build(env, "/cache");
  EXPECT_EQ(warm.cached, 3u);
  EXPECT_EQ(warm.parsed, 0u);
  EXPECT_EQ(env.reads("/r/pkg/m.py"), reads);
  EXPECT_EQ(EntitiesDocument("/r", warm.fragments, warm.errors),
            EntitiesDocument("/r", cold.fragments, cold.errors));
  ASSERT_EQ(warm.diagnostics.size(), cold.diagnostics.size());
  EXPECT_EQ(warm.diagnostics[0].message, cold.diagnostics[0].message);
}

TEST(EntityTableTest, ChangedFileIsReparsed) {
  FakeEnv env;
  AddRepo(env);
  Build(env, "/cache");
  env.SetNow(env.NowNs() + 10'000'000'000);
  env.AddFile("/r/pkg/m.py", "def f():\n    return 1\ndef g(): pass\n");
  EntitiesResult r = Build(env, "/cache");
  EXPECT_EQ(r.parsed, 1u);
  EXPECT_EQ(r.cached, 2u);
  EXPECT_NE(r.fragments[2].find("pkg/m.py::g"), std::string::npos);
}

TEST(EntityTableTest, RacyStatIsNotTrusted) {
  FakeEnv env;
  AddRepo(env);
  Build(env, "/cache");  // manifest written at the files' own mtime: racy
  // Same size, same mtime, new content: only re-hashing can notice.
  env.AddFile("/r/pkg/m.py", "def h():\n    return 2\n");
  env.AddFile("/r/pkg/m.py", "def h():\n    return 2\n");
  EntitiesResult r = Build(env, "/cache");
  EXPECT_NE(r.fragments[2].find("pkg/m.py::h"), std::string::npos);
}

TEST(EntityTableTest, CorruptCacheIsIgnored) {
  FakeEnv env;
  AddRepo(env);
  EntitiesResult cold = Build(env, "/cache");
  auto packs = env.ListDir("/cache/v2");
  ASSERT_TRUE(packs.ok());
  ASSERT_EQ(packs->size(), 1u);
  std::string pack = "/cache/v2/" + (*packs)[0].name;
  std::string data = env.Contents(pack);
  env.SetNow(env.NowNs() + 10'000'000'000);
  for (size_t cut : {data.size() / 2, data.size() - 1, size_t{5}}) {
    env.AddFile(pack, data.substr(0, cut));  // truncated
    EntitiesResult again = Build(env, "/cache");
    EXPECT_EQ(again.parsed, 3u) << cut;
    EXPECT_EQ(again.fragments, cold.fragments) << cut;
  }
}

TEST(EntityTableTest, NewInitFileChangesModulesAndInvalidatesRecords) {
  FakeEnv env;
  env.AddFile("/r/lib/m.py", "def f(): pass\n");
  Build(env, "/cache");
  env.SetNow(env.NowNs() + 10'000'000'000);
  env.AddFile("/r/lib/__init__.py", "");
  env.SetNow(env.NowNs() + 10'000'000'000);
  EntitiesResult r = Build(env, "/cache");
  EXPECT_NE(r.fragments[1].find("\"module\":\"lib.m\""), std::string::npos) << r.fragments[1];
}

TEST(EntitiesJsonTest, RoundTrip) {
  FakeEnv env;
  env.AddFile("/r/m.py",
              "'''Mod.'''\nimport a.b as c\nfrom . import (x as y)\n__all__ = ['f']\nz = 1\n"
              "@dec\nasync def f(a, *, b=1) -> int:\n    '''Doc \\u00e9.'''\n    return a\n"
              "class C(B):\n    def m(self): pass\n");
  EntitiesResult r = Build(env, std::nullopt);
  ASSERT_EQ(r.fragments.size(), 1u);
  auto table = ParseFileTableJson(r.fragments[0]);
  ASSERT_TRUE(table.ok()) << table.error();
  std::string again;
  AppendFileTableJson(*table, &again);
  EXPECT_EQ(again, r.fragments[0]);
  auto doc = ParseEntitiesDocument(EntitiesDocument("/r", r.fragments, r.errors));
  ASSERT_TRUE(doc.ok()) << doc.error();
  EXPECT_EQ(doc->at(0).entities.size(), 4u);
  EXPECT_FALSE(ParseEntitiesDocument("{\"schema\": \"other\"}").ok());
  EXPECT_FALSE(ParseFileTableJson("{").ok());
}

}  // namespace
}  // namespace fbkit::parser
