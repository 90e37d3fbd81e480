// The byte-level cut: exact expected sources for each rewriting rule, and the static check
// that refuses to leave a name undefined.
#include "extract/make/cut.h"

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

std::string ModuleOf(const std::string& path) {
  std::string m = path.substr(0, path.size() - 3);
  if (m.ends_with("/__init__")) m.resize(m.size() - 9);
  for (auto& c : m) c = c == '/' ? '.' : c;
  return m;
}

// CutRules with entity ids (the test's edge).
struct IdRules {
  const std::set<std::string>* executed = nullptr;
  bool strict = true;
};

class CutTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto p = parser::PythonParser::Create();
    ASSERT_TRUE(p.ok());
    parser_ = std::move(p.value());
  }

  // Builds the repository of `files` and cuts `extracted` out of it.
  CutResult Cut(const std::map<std::string, std::string>& files,
                const std::set<std::string>& extracted,
                const std::map<std::string, FilePolicy>& policies = {},
                const IdRules& rules = {}) {
    std::vector<parser::FileTable> tables;
    for (const auto& [path, src] : files) {
      env_->AddFile("/r/" + path, src);
      tables.push_back(parser_->Parse(path, ModuleOf(path), src, true));
    }
    repo_ = std::make_unique<Repo>(std::move(*Repo::Load(*env_, "/r", std::move(tables))));
    index_ = std::make_unique<CutIndex>(*repo_);
    std::vector<FilePolicy> policy;
    for (const auto& t : repo_->files()) {
      auto it = policies.find(t.path);
      policy.push_back(it == policies.end() ? FilePolicy::kEditable : it->second);
    }
    std::set<Ent> executed;
    if (rules.executed) executed = repo_->Resolve(*rules.executed);
    return PlanCut(*repo_, *index_, repo_->Resolve(extracted), policy, *parser_,
                   CutRules{rules.executed ? &executed : nullptr, rules.strict});
  }

  std::vector<std::string> Ids(const std::vector<Ent>& ents) const {
    return repo_->Ids(std::set<Ent>(ents.begin(), ents.end()));
  }

  std::unique_ptr<testing::FakeEnv> env_ = std::make_unique<testing::FakeEnv>();
  std::unique_ptr<parser::PythonParser> parser_;
  std::unique_ptr<Repo> repo_;
  std::unique_ptr<CutIndex> index_;
};

TEST_F(CutTest, RemovesAFunctionWithItsDecoratorsAndCommentWithoutLeavingAHole) {
  auto r = Cut({{"m.py",
                 "import functools\n\n\ndef a():\n    return 1\n\n\n# b's comment\n"
                 "@functools.cache\ndef b():\n    return 2\n\n\ndef c():\n    return a()\n"}},
               {"m.py::b"});
  ASSERT_TRUE(r.conflicts.empty());
  // functools was only used by b's decorator: an orphan, it goes too.
  EXPECT_EQ(r.texts.at("m.py"), "def a():\n    return 1\n\n\ndef c():\n    return a()\n");
  EXPECT_EQ(r.removed, std::vector<std::string>{"m.py::b"});
  EXPECT_TRUE(r.problems.empty());
}

// FeatureBench's rule: code the P2P runs never execute may keep naming what goes; code they
// execute may keep calling a function none of them calls (the calling line did not run), not
// one they call, nor read it as a value, nor name a class (`isinstance` reads it without a
// call).
TEST_F(CutTest, ExecutedCodeMayKeepADanglingReferenceOnlyToAFunctionNoP2PRunCalls) {
  const std::map<std::string, std::string> files = {
      {"money.py", "def fmt(c):\n    return str(c)\n"},
      {"report.py",
       "from money import fmt\n\n\ndef total(xs):\n    return fmt(sum(xs))\n\n\n"
       "def count(xs):\n    return len(xs)\n"}};
  const std::string cut_report =
      "def total(xs):\n    return fmt(sum(xs))\n\n\ndef count(xs):\n    return len(xs)\n";
  std::set<std::string> executed = {"report.py::count"};
  auto r = Cut(files, {"money.py::fmt"}, {}, IdRules{&executed, false});
  ASSERT_TRUE(r.conflicts.empty()) << r.reasons.front();
  EXPECT_EQ(r.dangling, std::vector<std::string>{"report.py:4: total uses fmt"});
  EXPECT_EQ(r.texts.at("report.py"), cut_report);
  executed.insert("report.py::total");
  auto runs = Cut(files, {"money.py::fmt"}, {}, IdRules{&executed, false});
  ASSERT_TRUE(runs.conflicts.empty()) << runs.reasons.front();
  EXPECT_EQ(runs.dangling, std::vector<std::string>{"report.py:4: total uses fmt"});
  EXPECT_EQ(runs.texts.at("report.py"), cut_report);
  executed.insert("money.py::fmt");
  auto called = Cut(files, {"money.py::fmt"}, {}, IdRules{&executed, false});
  EXPECT_EQ(Ids(called.conflicts), std::vector<std::string>{"money.py::fmt"});
  std::set<std::string> total = {"report.py::total"};
  // Read as a value in a function the P2P runs execute: evaluated without a call.
  auto a_value = Cut({{"money.py", files.at("money.py")},
                      {"report.py",
                       "from money import fmt\n\n\ndef total(xs):\n"
                       "    return {\"plain\": fmt}\n"}},
                     {"money.py::fmt"}, {}, IdRules{&total, false});
  EXPECT_EQ(Ids(a_value.conflicts), std::vector<std::string>{"money.py::fmt"});
  auto a_class = Cut({{"money.py", "class Fmt:\n    pass\n"},
                      {"report.py",
                       "from money import Fmt\n\n\ndef total(x):\n"
                       "    return isinstance(x, Fmt)\n"}},
                     {"money.py::Fmt"}, {}, IdRules{&total, false});
  EXPECT_EQ(Ids(a_class.conflicts), std::vector<std::string>{"money.py::Fmt"});
  // The rule before: nothing may name what goes.
  auto strict = Cut(files, {"money.py::fmt"}, {}, IdRules{});
  EXPECT_EQ(Ids(strict.conflicts), std::vector<std::string>{"money.py::fmt"});
  EXPECT_TRUE(strict.dangling.empty());
}

// A module-level use runs at import, whether the P2P runs call the function or not.
TEST_F(CutTest, AModuleLevelUseOfAFunctionNoP2PRunCallsIsAConflict) {
  std::set<std::string> none;
  auto r = Cut({{"money.py", "def fmt(c):\n    return str(c)\n"},
                {"report.py", "from money import fmt\n\nFORMATTERS = {\"plain\": fmt}\n"}},
               {"money.py::fmt"}, {}, IdRules{&none, false});
  EXPECT_EQ(Ids(r.conflicts), std::vector<std::string>{"money.py::fmt"});
}

// Defaults, annotations and decorators run when the module is imported, executed or not.
TEST_F(CutTest, SignaturesAndDecoratorsOfUnexecutedCodeStillConflict) {
  std::set<std::string> none;
  auto r = Cut({{"m.py",
                 "def unit():\n    return 1\n\n\ndef f(x, scale=unit()):\n    return x\n\n\n"
                 "def g(unit):\n    return unit\n"}},
               {"m.py::unit"}, {}, IdRules{&none, false});
  // f's default calls unit at import time; g's parameter merely shares the name.
  EXPECT_EQ(Ids(r.conflicts), std::vector<std::string>{"m.py::unit"});
  EXPECT_EQ(r.reasons, std::vector<std::string>{"m.py::f uses unit"});
}

// A return annotation's brackets are no parameter list: `-> tuple[sql.Statement, ...]` reads
// the module `sql` when the def runs (sqlparse's parse(), whose parameter is named `sql` too;
// the cut removed Statement and the package no longer imported).
TEST_F(CutTest, AReturnAnnotationsSubscriptReadsItsNamesAtImportTime) {
  std::set<std::string> none;
  auto r = Cut({{"pkg/__init__.py",
                 "from pkg import sql\n\n\ndef parse(sql: str, n: int = 1) -> tuple[sql.Statement, "
                 "...]:\n    return ()\n"},
                {"pkg/sql.py", "class Statement:\n    pass\n"}},
               {"pkg/sql.py::Statement"}, {}, IdRules{&none, false});
  EXPECT_EQ(Ids(r.conflicts), std::vector<std::string>{"pkg/sql.py::Statement"});
}

// Import-time code reading a removed member of a class that stays keeps the member.
TEST_F(CutTest, ModuleLevelIntrospectionOfAMethodKeepsIt) {
  std::set<std::string> none;
  auto r = Cut({{"tax.py",
                 "class T:\n    def rate(self):\n        \"\"\"Rate.\"\"\"\n        return 1\n\n"
                 "    def apply(self):\n        return 2\n"},
                {"docs.py", "from tax import T\n\nHELP = T.rate.__doc__\n"}},
               {"tax.py::T.rate", "tax.py::T.apply"}, {}, IdRules{&none, false});
  EXPECT_EQ(Ids(r.conflicts), std::vector<std::string>{"tax.py::T.rate"});
}

// `TR2 = debug(TR2)` reads the def it rebinds: without the def the module cannot import,
// whether or not that statement sits in a module-level `if` block.
TEST_F(CutTest, AModuleLevelRebindingOfARemovedNameIsAConflict) {
  std::set<std::string> none;
  const std::map<std::string, std::string> files = {
      {"fu.py",
       "from conf import DEBUG\n\n\ndef TR1(rv):\n    return rv\n\n\ndef TR2(rv):\n"
       "    return rv\n\n\nif DEBUG:\n    (TR1, TR2) = list(map(print, (TR1, TR2)))\n"},
      {"conf.py", "DEBUG = False\n"}};
  auto r = Cut(files, {"fu.py::TR2"}, {}, IdRules{&none, false});
  EXPECT_EQ(Ids(r.conflicts), std::vector<std::string>{"fu.py::TR2"});
  EXPECT_EQ(r.reasons, std::vector<std::string>{"fu.py::<module> uses TR2"});
  // A name bound again from something else stays available.
  auto other = Cut({{"m.py", "def f():\n    return 1\n\n\nf = print\n"}}, {"m.py::f"});
  EXPECT_TRUE(other.conflicts.empty());
}

TEST_F(CutTest, LastFunctionOfAFileLeavesNoTrailingBlankLines) {
  auto r = Cut({{"m.py", "def a():\n    return 1\n\n\ndef b():\n    return 2\n"}}, {"m.py::b"});
  EXPECT_EQ(r.texts.at("m.py"), "def a():\n    return 1\n");
}

TEST_F(CutTest, EmptiedClassGetsPassAtItsOwnIndentationWithTabs) {
  auto r = Cut({{"m.py",
                 "class A:\n\tdef f(self):\n\t\treturn 1\n\n\tdef g(self):\n\t\treturn 2\n\n\n"
                 "class B(A):\n\tpass\n"}},
               {"m.py::A.f", "m.py::A.g"});
  ASSERT_TRUE(r.conflicts.empty());
  EXPECT_EQ(r.texts.at("m.py"), "class A:\n\tpass\n\n\nclass B(A):\n\tpass\n");
  EXPECT_TRUE(r.problems.empty());
}

// seaborn's Nominal._setup: the only method of a class nested in a function, followed by
// comments indented as its body; the syntax tree runs the method over them.
TEST_F(CutTest, AClassEmptiedOfAMethodWhoseBodyEndsInCommentsGetsPass) {
  auto r = Cut({{"m.py",
                 "def setup():\n    class Cat(Base):\n        def f(self, axis):\n"
                 "            ...\n            # axis.set(1)\n\n    return Cat()\n"}},
               {"m.py::setup.Cat.f"});
  ASSERT_TRUE(r.conflicts.empty());
  EXPECT_TRUE(r.problems.empty()) << r.problems.front();
  EXPECT_EQ(r.texts.at("m.py"), "def setup():\n    class Cat(Base):\n        pass\n"
                                "            # axis.set(1)\n\n    return Cat()\n");
}

TEST_F(CutTest, ClassKeepsItsDocstringAndOtherMethods) {
  auto r = Cut({{"m.py",
                 "class A:\n    \"\"\"Doc.\"\"\"\n\n    def f(self):\n        return 1\n\n"
                 "    def g(self):\n        return 2\n"}},
               {"m.py::A.f"});
  EXPECT_EQ(r.texts.at("m.py"),
            "class A:\n    \"\"\"Doc.\"\"\"\n\n    def g(self):\n        return 2\n");
}

TEST_F(CutTest, EmptiedIfBlockGetsPass) {
  auto r = Cut({{"m.py",
                 "import sys\n\nif sys.version_info >= (3,):\n    def f():\n        return 1\n"
                 "else:\n    f = None\n"}},
               {"m.py::f"});
  ASSERT_TRUE(r.conflicts.empty());
  EXPECT_EQ(r.texts.at("m.py"),
            "import sys\n\nif sys.version_info >= (3,):\n    pass\nelse:\n    f = None\n");
}

TEST_F(CutTest, DropsNamesFromImportListsKeepingAliasesCommentsAndLayout) {
  auto r =
      Cut({{"pkg/__init__.py", ""},
           {"pkg/a.py", "def f():\n    pass\n\n\ndef g():\n    pass\n\n\ndef h():\n    pass\n"},
           {"pkg/b.py",
            "from .a import (\n    f as eff,  # the f\n    g,\n    h,\n)\n"
            "from .a import g as gee, f\n\n\ndef use():\n    return g, gee, h\n"}},
          {"pkg/a.py::f"});
  ASSERT_TRUE(r.conflicts.empty()) << r.reasons.front();
  EXPECT_EQ(r.texts.at("pkg/b.py"),
            "from .a import (\n    g,\n    h,\n)\nfrom .a import g as gee\n\n\n"
            "def use():\n    return g, gee, h\n");
}

TEST_F(CutTest, ReExportsAndAllEntriesGoWithTheEntity) {
  auto r = Cut({{"pkg/__init__.py",
                 "from .a import f, g as gee\n\n__all__ = [\n    \"f\",\n    \"gee\",\n]\n"},
                {"pkg/a.py", "def f():\n    pass\n\n\ndef g():\n    pass\n"}},
               {"pkg/a.py::f"});
  ASSERT_TRUE(r.conflicts.empty());
  EXPECT_EQ(r.texts.at("pkg/__init__.py"),
            "from .a import g as gee\n\n__all__ = [\n    \"gee\",\n]\n");
  EXPECT_EQ(r.texts.at("pkg/a.py"), "def g():\n    pass\n");
}

TEST_F(CutTest, AnAllListEmptiedOfEveryEntryKeepsNoWhitespaceOnlyLine) {
  // packaging's direct_url.py: every exported name goes; no "    " line may stay (git apply
  // --whitespace=fix, as FeatureBench's harness applies a mask, would strip it).
  auto r = Cut({{"pkg/__init__.py", ""},
                {"pkg/a.py",
                 "__all__ = [\n    \"f\",\n    \"g\",\n]\n\n\ndef f():\n    pass\n\n\n"
                 "def g():\n    pass\n"}},
               {"pkg/a.py::f", "pkg/a.py::g"});
  ASSERT_TRUE(r.conflicts.empty());
  EXPECT_EQ(r.texts.at("pkg/a.py"), "__all__ = [\n]\n");
}

// `__all__` as a tuple without parentheses: entries read from the syntax tree; emptied, the
// value becomes `()` (text edits once left `__all__ = `, an unparsable line); a string that
// merely mentions a name is no entry.
TEST_F(CutTest, AnAllTupleWithoutParenthesesStaysValid) {
  auto r = Cut({{"pkg/__init__.py", ""},
                {"pkg/a.py",
                 "__all__ = 'f', 'g'\nNOTE = \"'f' is gone\"\n\n\ndef f():\n    pass\n\n\n"
                 "def g():\n    return NOTE\n"},
                {"pkg/b.py", "__all__ = 'h', 'k'\n\n\ndef h():\n    pass\n\n\ndef k():\n    pass\n"}},
               {"pkg/a.py::f", "pkg/b.py::h", "pkg/b.py::k"});
  ASSERT_TRUE(r.conflicts.empty());
  EXPECT_EQ(r.texts.at("pkg/a.py"),
            "__all__ = 'g'\nNOTE = \"'f' is gone\"\n\n\ndef g():\n    return NOTE\n");
  EXPECT_EQ(r.texts.at("pkg/b.py"), "__all__ = ()\n");
}

TEST_F(CutTest, OrphanImportsAndConstantsOfTheRemovedCodeGo) {
  auto r = Cut({{"m.py",
                 "import math\nimport os\n\n_FACTOR = 2.5\nLIMIT = 3\n\n\n"
                 "def polar(x):\n    return math.sqrt(x) * _FACTOR\n\n\n"
                 "def other():\n    return os.sep, LIMIT\n"}},
               {"m.py::polar"});
  ASSERT_TRUE(r.conflicts.empty());
  EXPECT_EQ(r.texts.at("m.py"),
            "import os\n\nLIMIT = 3\n\n\ndef other():\n    return os.sep, LIMIT\n");
  EXPECT_EQ(r.orphans, (std::vector<std::string>{"m.py: math", "m.py: _FACTOR"}));
}

// `from __future__ import annotations` is a directive to the compiler, not a name: a removed
// function that uses a local named `annotations` does not take it along (pydantic's
// `_typing_extra.py` then evaluated `type[BaseModel]` at import and failed).
TEST_F(CutTest, AFutureImportIsNoOrphan) {
  auto r = Cut({{"m.py",
                 "from __future__ import annotations\n\n\n"
                 "def collect(obj):\n    annotations = obj.__annotations__\n"
                 "    return annotations\n"
                 "\n\ndef other(x: Later) -> Later:\n    return x\n"}},
               {"m.py::collect"});
  ASSERT_TRUE(r.conflicts.empty());
  EXPECT_EQ(r.texts.at("m.py"),
            "from __future__ import annotations\n\n\ndef other(x: Later) -> Later:\n"
            "    return x\n");
  EXPECT_TRUE(r.orphans.empty());
}

TEST_F(CutTest, ConstantInAllOrReadElsewhereIsNoOrphan) {
  auto r = Cut({{"pkg/__init__.py", ""},
                {"pkg/m.py", "__all__ = [\"A\"]\nA = 1\nB = 2\n\n\ndef f():\n    return A + B\n"},
                {"pkg/n.py", "from .m import B\n\nprint(B)\n"}},
               {"pkg/m.py::f"});
  ASSERT_TRUE(r.conflicts.empty());
  EXPECT_EQ(r.texts.at("pkg/m.py"), "__all__ = [\"A\"]\nA = 1\nB = 2\n");
  EXPECT_TRUE(r.orphans.empty());
}

TEST_F(CutTest, NameStillUsedByRemainingCodeIsAConflict) {
  auto r = Cut({{"m.py",
                 "def helper():\n    pass\n\n\ndef feature():\n    helper()\n\n\n"
                 "def untested():\n    return helper()\n"}},
               {"m.py::helper", "m.py::feature"});
  EXPECT_EQ(Ids(r.conflicts), std::vector<std::string>{"m.py::helper"});
  EXPECT_TRUE(r.texts.empty());
}

TEST_F(CutTest, ImportedNameUsedInAnotherModuleIsAConflict) {
  auto r = Cut({{"pkg/__init__.py", ""},
                {"pkg/a.py", "def f():\n    pass\n"},
                {"pkg/b.py", "from pkg.a import f\n\n\ndef g():\n    return f()\n"}},
               {"pkg/a.py::f"});
  EXPECT_EQ(Ids(r.conflicts), std::vector<std::string>{"pkg/a.py::f"});
}

TEST_F(CutTest, DottedUseThroughAModuleImportIsAConflict) {
  auto r = Cut({{"pkg/__init__.py", ""},
                {"pkg/a.py", "def f():\n    pass\n"},
                {"pkg/b.py", "import pkg.a\n\n\ndef g():\n    return pkg.a.f()\n"}},
               {"pkg/a.py::f"});
  EXPECT_EQ(Ids(r.conflicts), std::vector<std::string>{"pkg/a.py::f"});
}

TEST_F(CutTest, NameUsedInsideAnFStringIsAConflict) {
  auto r = Cut({{"m.py",
                 "def color(c):\n    return str(c)\n\n\ndef style(t, fg):\n"
                 "    return f\"\\033[{color(fg)}m{t!r:>{width()}}\"\n"}},
               {"m.py::color"});
  EXPECT_EQ(Ids(r.conflicts), std::vector<std::string>{"m.py::color"});
}

TEST_F(CutTest, NameUsedInADecoratorArgumentIsAConflict) {
  auto r = Cut({{"m.py",
                 "import pytest\n\n\ndef make():\n    return 1\n\n\n"
                 "@pytest.mark.parametrize(\"x\", [make()])\ndef test(x):\n    pass\n"}},
               {"m.py::make"});
  EXPECT_EQ(Ids(r.conflicts), std::vector<std::string>{"m.py::make"});
}

TEST_F(CutTest, FrozenTestCodeIsCheckedButIgnoredTestFilesAreNot) {
  std::map<std::string, std::string> files = {{"pkg/__init__.py", ""},
                                              {"pkg/a.py", "def f():\n    pass\n"},
                                              {"tests/test_a.py", "from pkg.a import f\n"}};
  auto frozen = Cut(files, {"pkg/a.py::f"}, {{"tests/test_a.py", FilePolicy::kFrozen}});
  EXPECT_EQ(Ids(frozen.conflicts), std::vector<std::string>{"pkg/a.py::f"});
  env_ = std::make_unique<testing::FakeEnv>();
  auto ignored = Cut(files, {"pkg/a.py::f"}, {{"tests/test_a.py", FilePolicy::kIgnored}});
  EXPECT_TRUE(ignored.conflicts.empty());
  EXPECT_EQ(ignored.texts.count("tests/test_a.py"), 0u);
}

TEST_F(CutTest, PropertySetterKeepsItsGetter) {
  auto r = Cut({{"m.py",
                 "class A:\n    @property\n    def x(self):\n        return 1\n\n"
                 "    @x.setter\n    def x(self, v):\n        pass\n"}},
               {"m.py::A.x"});
  EXPECT_EQ(Ids(r.conflicts), std::vector<std::string>{"m.py::A.x"});
}

TEST_F(CutTest, StarImportUsersAreChecked) {
  auto r = Cut({{"pkg/__init__.py", "from .a import *\n\n\ndef g():\n    return f()\n"},
                {"pkg/a.py", "def f():\n    pass\n"}},
               {"pkg/a.py::f"});
  EXPECT_EQ(Ids(r.conflicts), std::vector<std::string>{"pkg/a.py::f"});
}

TEST_F(CutTest, ImportOfRemovedNameInsideAFunctionIsAConflict) {
  auto r = Cut({{"pkg/__init__.py", ""},
                {"pkg/a.py", "def f():\n    pass\n"},
                {"pkg/b.py", "def g():\n    from .a import f\n    return f\n"}},
               {"pkg/a.py::f"});
  EXPECT_EQ(Ids(r.conflicts), std::vector<std::string>{"pkg/a.py::f"});
}

TEST_F(CutTest, EveryRewrittenFileParses) {
  auto r =
      Cut({{"m.py",
            "from os import (path,\n    sep)\n\n\nclass A:\n    def f(self):\n        return path\n"
            "\n    class B:\n        def g(self):\n            return sep\n"}},
          {"m.py::A.f", "m.py::A.B.g"});
  ASSERT_TRUE(r.conflicts.empty());
  EXPECT_TRUE(r.problems.empty()) << r.problems.front();
  EXPECT_EQ(r.texts.at("m.py"), "class A:\n    class B:\n        pass\n");
}

}  // namespace
}  // namespace fbkit::extract::make
