// The level-2 test file: imports of the package and the package's module paths named in str
// literals are redirected to agent_code; other text is left as it was.
#include "extract/make/l2.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "parser/python_parser.h"
#include "tests/testing/fake_env.h"

namespace fbkit::extract::make {
namespace {

class L2Test : public ::testing::Test {
 protected:
  void SetUp() override {
    auto p = parser::PythonParser::Create();
    ASSERT_TRUE(p.ok());
    parser_ = std::move(*p);
  }

  util::Expected<std::string> Redirect(const std::string& test_source,
                                       std::vector<std::string>* uses = nullptr,
                                       const std::string& conftest = "") {
    std::map<std::string, std::pair<std::string, std::string>> files = {
        {"pkg/__init__.py", {"pkg", "from .errors import Bad\n"}},
        {"pkg/errors.py", {"pkg.errors", "class Bad(Exception):\n    pass\n"}},
        {"tests/test_x.py", {"tests.test_x", test_source}},
    };
    if (!conftest.empty()) {
      files["conftest.py"] = {"conftest", "import os\n"};
      files["tests/conftest.py"] = {"tests.conftest", conftest};
      files["other/conftest.py"] = {"other.conftest", conftest};
    }
    std::vector<parser::FileTable> tables;
    for (const auto& [path, m] : files) {
      env_.AddFile("/r/" + path, m.second);
      tables.push_back(parser_->Parse(path, m.first, m.second, true));
    }
    repo_ = std::make_unique<Repo>(std::move(*Repo::Load(env_, "/r", std::move(tables))));
    return RedirectTestImports(*repo_, *parser_, "tests/test_x.py", "pkg", uses);
  }

  testing::FakeEnv env_;
  std::unique_ptr<parser::PythonParser> parser_;
  std::unique_ptr<Repo> repo_;
};

TEST_F(L2Test, ModulePathsInStrLiteralsFollowTheImports) {
  auto got = Redirect(
      "import pkg.errors\n"
      "from pkg import Bad\n"
      "\n"
      "def test_x(monkeypatch):\n"
      "    monkeypatch.setattr('pkg.errors.Bad', None)\n"
      "    assert msg == 'pkg.errors.Bad: no'\n"
      "    match = r'<pkg\\.errors\\.Bad object'\n"
      "    keep = ['pkg', 'pkg.nothing', 'mypkg.errors', 'x.pkg.errors', b'pkg.errors']\n");
  ASSERT_TRUE(got.ok()) << got.error();
  EXPECT_EQ(*got,
            "import agent_code.errors, agent_code as pkg\n"
            "from agent_code import Bad\n"
            "\n"
            "def test_x(monkeypatch):\n"
            "    monkeypatch.setattr('agent_code.errors.Bad', None)\n"
            "    assert msg == 'agent_code.errors.Bad: no'\n"
            "    match = r'<agent_code\\.errors\\.Bad object'\n"
            "    keep = ['pkg', 'pkg.nothing', 'mypkg.errors', 'x.pkg.errors', b'pkg.errors']\n");
}

TEST_F(L2Test, TestIdsGetTheSameRenamingWithPytestsEscapedBackslashes) {
  ASSERT_TRUE(Redirect("import pkg\n").ok());
  // pytest shows r'pkg\.errors' as pkg\\.errors in an id.
  EXPECT_EQ(RenameModulePaths(*repo_, "pkg", "[x-<pkg\\\\.errors\\\\.Bad object>-pkg.none]"),
            "[x-<agent_code\\\\.errors\\\\.Bad object>-pkg.none]");
}

TEST_F(L2Test, ATestFileThatDoesNotImportThePackageIsAnError) {
  auto got = Redirect("def test_x():\n    assert 'pkg.errors'\n");
  ASSERT_FALSE(got.ok());
  EXPECT_NE(got.error().find("does not import pkg"), std::string::npos) << got.error();
}

TEST_F(L2Test, PickledClassesOfThePackageInBytesLiteralsAreRenamed) {
  // Protocol 2 GLOBAL opcodes, one whole, one with its module split across two literals, one
  // with the package name itself split; names that are no package module stay.
  auto got = Redirect(
      "import pickle\n"
      "from pkg import Bad\n"
      "A = b\"\\x80\\x02cpkg.errors\\nBad\\nq\\x00)\\x81.\"\n"
      "B = (b\"\\x80\\x02cpkg.\"\n     b\"errors\\nBad\\n.\")\n"
      "C = (b\"\\x80\\x02cp\"\n     b'kg.errors\\nBad\\n.')\n"
      "D = b\"cpkg.nothing\\nX\\n cpkg.errorsX\\n xcpkg.errors \"\n");
  ASSERT_TRUE(got.ok()) << got.error();
  EXPECT_EQ(*got,
            "import pickle\n"
            "from agent_code import Bad\n"
            "A = b\"\\x80\\x02cagent_code.errors\\nBad\\nq\\x00)\\x81.\"\n"
            "B = (b\"\\x80\\x02cagent_code.\"\n     b\"errors\\nBad\\n.\")\n"
            "C = (b\"\\x80\\x02cagent_code\"\n     b'.errors\\nBad\\n.')\n"
            "D = b\"cpkg.nothing\\nX\\n cpkg.errorsX\\n xcpkg.errors \"\n");
}

TEST_F(L2Test, TheConftestChainIsTheTestsDirectoryAndItsParentsRootFirst) {
  ASSERT_TRUE(Redirect("from pkg import Bad\n", nullptr, "from pkg.errors import Bad\n").ok());
  EXPECT_EQ(ConftestChain(*repo_, "tests/test_x.py"),
            (std::vector<std::string>{"conftest.py", "tests/conftest.py"}));
  EXPECT_EQ(ConftestChain(*repo_, "test_top.py"), (std::vector<std::string>{"conftest.py"}));
}

// The test helpers the F2P file and its conftests import are redirected like them (xarray's
// tests import assert_equal from xarray/tests/__init__.py, which checks the objects' classes
// against the package it imports): test modules only, transitively, with the test packages
// above them.
TEST_F(L2Test, TheTestModulesLoadedAreTheConftestsThenTheTestHelpersImportedTransitively) {
  const std::map<std::string, std::pair<std::string, std::string>> files = {
      {"pkg/__init__.py", {"pkg", ""}},
      {"pkg/util.py", {"pkg.util", "def f():\n    pass\n"}},
      {"pkg/tests/__init__.py", {"pkg.tests", "import pkg.util\nfrom . import checks\n"}},
      {"pkg/tests/checks.py", {"pkg.tests.checks", "import pkg\n"}},
      {"pkg/tests/unused.py", {"pkg.tests.unused", "import pkg\n"}},
      {"conftest.py", {"conftest", "from helpers.more import h\n"}},
      {"helpers/__init__.py", {"helpers", ""}},
      {"helpers/more.py", {"helpers.more", "import pkg.util\n"}},
      {"tests/__init__.py", {"tests", ""}},
      {"tests/test_x.py",
       {"tests.test_x", "from pkg.tests import assert_x\nfrom pkg.util import f\nimport os\n"}},
  };
  std::vector<parser::FileTable> tables;
  for (const auto& [path, m] : files) {
    env_.AddFile("/r/" + path, m.second);
    tables.push_back(parser_->Parse(path, m.first, m.second, true));
  }
  repo_ = std::make_unique<Repo>(std::move(*Repo::Load(env_, "/r", std::move(tables))));
  // helpers/ is no test code (not under a tests directory): agent_code's business, not the
  // test patch's; tests/__init__.py is not imported by name.
  EXPECT_EQ(LoadedTestModules(*repo_, "tests/test_x.py"),
            (std::vector<std::string>{"conftest.py", "pkg/tests/__init__.py",
                                      "pkg/tests/checks.py"}));
}

// The repository's pytest configuration names the package's modules in its warning filters
// (pyjwt: `"error"` then `"ignore::jwt.warnings.InsecureKeyLengthWarning"`): the L2 test patch
// renames them in pytest's sections only, and what a filter reads from agent_code (the
// category class) is one more name the tests need.
TEST_F(L2Test, PytestConfigurationNamingThePackageIsRedirectedInItsPytestSectionsOnly) {
  ASSERT_TRUE(Redirect("from pkg import Bad\n").ok());
  const std::string toml =
      "[project]\nname = \"pkg\"\nscripts = {x = \"pkg.errors:main\"}\n"
      "[tool.pytest.ini_options]\nfilterwarnings = [\n    \"error\",\n"
      "    \"ignore::pkg.errors.Bad\",\n    \"ignore:old:DeprecationWarning:pkg.errors\",\n"
      "    \"ignore::pkg.nothing.X\",\n]\n[tool.other]\nx = \"pkg.errors\"\n";
  env_.AddFile("/r/pyproject.toml", toml);
  env_.AddFile("/r/tests/tox.ini", "[flake8]\nx = pkg.errors\n");  // no pytest section
  env_.AddFile("/r/other/setup.cfg", "[tool:pytest]\nfilterwarnings = ignore::pkg.errors.Bad\n");
  std::set<std::string> uses;
  auto got = RedirectedConfigs(env_, *repo_, "tests/test_x.py", "pkg", &uses);
  ASSERT_TRUE(got.ok()) << got.error();
  ASSERT_EQ(got->size(), 1u);  // not other/setup.cfg: not above the test file
  EXPECT_EQ((*got)[0].path, "pyproject.toml");
  EXPECT_EQ((*got)[0].original, toml);
  EXPECT_EQ((*got)[0].redirected,
            "[project]\nname = \"pkg\"\nscripts = {x = \"pkg.errors:main\"}\n"
            "[tool.pytest.ini_options]\nfilterwarnings = [\n    \"error\",\n"
            "    \"ignore::agent_code.errors.Bad\",\n"
            "    \"ignore:old:DeprecationWarning:agent_code.errors\",\n"
            "    \"ignore::pkg.nothing.X\",\n]\n[tool.other]\nx = \"pkg.errors\"\n");
  EXPECT_EQ(uses, (std::set<std::string>{"from agent_code.errors import Bad"}));
}

}  // namespace
}  // namespace fbkit::extract::make
