// Problem statements without a model (issue 66 item 5): titled and introduced by what the test
// file exercises (the public names it reads, its own test names), never by a private helper;
// no bullet that only restates a name; docstrings with the observed types; at level 2 every
// name the tests read from agent_code shown with its signature; the same bytes every time.
#include "extract/make/statement.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "extract/make/describe.h"
#include "extract/make/tested.h"
#include "parser/python_parser.h"
#include "tests/testing/fake_env.h"

namespace fbkit::extract::make {
namespace {

const char* kInit =
    "from ._impl import run as go, MODE\n"
    "LIMIT = 3\n\n"
    "class Cache:\n"
    "    \"\"\"A small cache.\n\n    ```pycon\n    >>> Cache(2).get(1)\n    ```\n    \"\"\"\n"
    "    def __init__(self, size):\n        self.size = size\n"
    "    def get(self, key):\n        return None\n"
    "    def _evict(self):\n        pass\n\n"
    "def shortcut(items):\n    return go(items)\n";
const char* kImpl =
    "def _helper(x):\n    return x + 1\n\n"
    "def run(items):\n    \"\"\"Run over *items*.\"\"\"\n    return [_helper(i) for i in items]\n"
    "MODE: int = 2\n";
const char* kKeys = "def hashkey(*args):\n    return args\n";
const char* kTest =
    "import pkg\nimport pkg.keys\nfrom pkg import Cache\n\n"
    "class RunTest:\n"
    "    def test_run(self):\n"
    "        assert pkg.go([1]) == [2]\n"
    "        assert pkg.keys.hashkey(1) == (1,)\n"
    "        assert Cache(2).get(1) is None\n"
    "        assert pkg.LIMIT == 3\n";

class StatementTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto p = parser::PythonParser::Create();
    ASSERT_TRUE(p.ok());
    std::vector<parser::FileTable> tables;
    for (const auto& [path, module, src] :
         std::vector<std::tuple<std::string, std::string, std::string>>{
             {"pkg/__init__.py", "pkg", kInit},
             {"pkg/_impl.py", "pkg._impl", kImpl},
             {"pkg/keys.py", "pkg.keys", kKeys},
             {"tests/test_run.py", "tests.test_run", kTest}}) {
      env_.AddFile("/r/" + path, src);
      tables.push_back((*p)->Parse(path, module, src, true));
    }
    repo_ = std::make_unique<Repo>(std::move(*Repo::Load(env_, "/r", std::move(tables))));
    helper_ = *repo_->Find("pkg/_impl.py::_helper");
    trace_.files["tests/test_run.py"].types[{"pkg/_impl.py", 1, "_helper"}] = {{{"x", {"int"}}},
                                                                              {"int"}};
    trace_.files["tests/test_run.py"].types[{"pkg/keys.py", 1, "hashkey"}] = {{{"*args", {"int"}}},
                                                                             {"tuple"}};
    trace_.files["tests/test_other.py"].types[{"pkg/__init__.py", 13, "get"}] = {{{"key", {"str"}}},
                                                                               {"NoneType"}};
  }

  StatementInput Input(int level) {
    StatementInput in{"o/r", "tests/test_run.py", {helper_}, {helper_}, {}, level, "", {}};
    in.trace = &trace_;
    if (level == 2) {
      in.package = "pkg";
      // As WriteLevel2 gives them: imports, and dotted uses of imported modules.
      in.test_uses = {"agent_code.LIMIT", "agent_code.MODE", "agent_code.go", "agent_code.keys.hashkey",
                      "from agent_code import Cache"};
    }
    return in;
  }

  testing::FakeEnv env_;
  std::unique_ptr<Repo> repo_;
  tracer::TraceSet trace_;
  Ent helper_ = 0;
};

TEST_F(StatementTest, TheTestedNamesFollowReExports) {
  EXPECT_EQ(TestedNames(*repo_, "tests/test_run.py", "pkg"),
            (std::vector<std::string>{"pkg.Cache", "pkg.LIMIT", "pkg.go", "pkg.keys.hashkey"}));
  EXPECT_EQ(ResolveDotted(*repo_, "pkg.go"), repo_->Find("pkg/_impl.py::run"));
  EXPECT_EQ(ResolveDotted(*repo_, "pkg.Cache.get"), repo_->Find("pkg/__init__.py::Cache.get"));
  EXPECT_FALSE(ResolveDotted(*repo_, "pkg.keys").has_value());  // a module
  EXPECT_FALSE(ResolveDotted(*repo_, "pkg.LIMIT").has_value());  // a value
  EXPECT_EQ(AssignmentOf(*repo_, "pkg.LIMIT"), "LIMIT = 3");
  EXPECT_EQ(UseAsDotted("from agent_code.keys import hashkey", "pkg"), "pkg.keys.hashkey");
  EXPECT_EQ(UseAsDotted("agent_code.go", "pkg"), "pkg.go");
  EXPECT_EQ(TestFileNames(*repo_, "tests/test_run.py", 8), (std::vector<std::string>{"RunTest"}));
}

// "Uses" names the repository's functions a description's code calls, imported ones too.
TEST_F(StatementTest, ADescriptionNamesTheImportedFunctionsItUses) {
  std::string d = DescribeFromCode(*repo_, *repo_->Find("pkg/__init__.py::shortcut"));
  EXPECT_NE(d.find("Uses:\n    `go`"), std::string::npos) << d;
}

TEST_F(StatementTest, Level1IsTitledByWhatTheTestsExerciseNotByThePrivateHelper) {
  auto md = ProblemStatement(*repo_, Input(1));
  ASSERT_TRUE(md.ok()) << md.error();
  // `go` (run, re-exported) reaches the removed helper: the title's subject.
  EXPECT_NE(md->find("**Task Statement: implement `go` and the code behind it in o/r, as "
                     "`tests/test_run.py` exercises it**"),
            std::string::npos)
      << *md;
  EXPECT_NE(md->find("The tests (`tests/test_run.py`: `RunTest`) use the library through:\n\n"
                     "- `Cache(size)`: A small cache.\n"
                     "- `go(items)`: Run over *items*.\n"
                     "- `keys.hashkey(*args)`: observed in the tests: *args int, returns tuple\n"
                     "- the names `LIMIT`\n"),
            std::string::npos)
      << *md;
  EXPECT_NE(md->find("- `_helper(x)`: used by `run`\n"), std::string::npos) << *md;
  // The helper's docstring: observed types, no restatement of its name or kind.
  EXPECT_NE(md->find("x (positional or keyword; observed: int)"), std::string::npos) << *md;
  EXPECT_NE(md->find("Returns:\n        observed: int\n"), std::string::npos) << *md;
  EXPECT_EQ(md->find("Function `_helper`"), std::string::npos) << *md;
  EXPECT_EQ(md->find("not annotated"), std::string::npos) << *md;
  EXPECT_EQ(md->find("### The names the tests use"), std::string::npos);  // level 2 only
  auto again = ProblemStatement(*repo_, Input(1));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *md);
}

TEST_F(StatementTest, Level2ShowsEveryNameTheTestsReadWithItsSignature) {
  auto md = ProblemStatement(*repo_, Input(2));
  ASSERT_TRUE(md.ok()) << md.error();
  EXPECT_NE(md->find("**Task Statement: implement `Cache`, `LIMIT` and `MODE` (and 2 more) from "
                     "scratch as the package `agent_code`"),
            std::string::npos)
      << *md;
  // The re-export under another name binds it; the class with its public methods; the value
  // with its assignment.
  EXPECT_NE(md->find("Import: `from agent_code import go`\n\n```python\ndef run(items):\n"
                     "    \"\"\"Run over *items*.\"\"\"\n    ...\n\ngo = run\n```"),
            std::string::npos)
      << *md;
  EXPECT_NE(md->find("Import: `from agent_code.keys import hashkey`\n\n```python\ndef hashkey(*args):"),
            std::string::npos)
      << *md;
  // A docstring's own fenced example does not end the block: its fence is longer.
  size_t cache = md->find("Import: `from agent_code import Cache`\n\n````python\nclass Cache:");
  ASSERT_NE(cache, std::string::npos) << *md;
  EXPECT_NE(md->find("\n    ```\n", cache), std::string::npos) << *md;
  EXPECT_LT(md->find("\n    ```\n", cache), md->find("\n````\n", cache)) << *md;
  EXPECT_NE(md->find("    def get(self, key):", cache), std::string::npos);
  EXPECT_EQ(md->find("_evict", cache), std::string::npos);  // private: not the tests' interface
  // Types other tests observed, for code the F2P tests did not call.
  EXPECT_NE(md->find("key (positional or keyword; observed in other tests: str)", cache),
            std::string::npos)
      << *md;
  EXPECT_NE(md->find("Import: `from agent_code import LIMIT`\n\nA module-level value, in the "
                     "original:\n\n```python\nLIMIT = 3\n```"),
            std::string::npos)
      << *md;
  // A value re-exported from where it is assigned (annotated there) is shown as assigned.
  EXPECT_NE(md->find("Import: `from agent_code import MODE`\n\nA module-level value, in the "
                     "original:\n\n```python\nMODE: int = 2\n```"),
            std::string::npos)
      << *md;
}

}  // namespace
}  // namespace fbkit::extract::make
