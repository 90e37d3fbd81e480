// Entity changes between two versions of Python files: each change type with exact
// expectations, and the normaliser that tells cosmetic from real changes.
#include "groundtruth/entity_changes.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace fbkit::groundtruth {
namespace {

class EntityChangesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto p = parser::PythonParser::Create();
    ASSERT_TRUE(p.ok());
    parser_ = std::move(p.value());
  }

  // "change entity [old]" lines, in report order.
  std::vector<std::string> Diff(const std::vector<FileVersions>& files) {
    std::vector<std::string> out;
    for (const auto& c : DiffEntities(*parser_, files).entities) {
      std::string line = std::string(ChangeName(c.change)) + " " + c.entity;
      if (!c.old_entity.empty()) line += " " + c.old_entity;
      out.push_back(line);
    }
    return out;
  }

  std::unique_ptr<parser::PythonParser> parser_;
};

TEST(NormalizeCodeTest, IgnoresWhitespaceAndComments) {
  std::string a = "def f(a, b):\n    # note\n    return a+b  # sum\n\n";
  std::string b = "def f( a,b ):\n\n  return a + b\n";
  EXPECT_EQ(NormalizeCode(a), NormalizeCode(b));
  EXPECT_EQ(NormalizeCode(a), "0:def f ( a , b ) :\n1:return a + b");
}

TEST(NormalizeCodeTest, KeepsBlockStructureAndStrings) {
  std::string a = "def f(x):\n    if x:\n        g()\n    h()\n";
  std::string b = "def f(x):\n    if x:\n        g()\n        h()\n";
  EXPECT_NE(NormalizeCode(a), NormalizeCode(b));
  EXPECT_NE(NormalizeCode("x = 'a  b'\n"), NormalizeCode("x = 'a b'\n"));
  EXPECT_EQ(NormalizeCode("x = '#not a comment'  # one\n"), "0:x = '#not a comment'");
  EXPECT_EQ(NormalizeCode("f(1,\n      2)\n"), NormalizeCode("f(1, 2)\n"));
  EXPECT_EQ(NormalizeCode("s = \"\"\"a\n  # b\"\"\"\n"), "0:s = \"\"\"a\n  # b\"\"\"");
}

TEST(NormalizeCodeTest, TrailingCommasThatCannotMatter) {
  EXPECT_EQ(NormalizeCode("f(\n    a,\n    b,\n)\n"), NormalizeCode("f(a, b)\n"));
  EXPECT_EQ(NormalizeCode("f(\n    a,\n)\n"), NormalizeCode("f(a)\n"));
  EXPECT_EQ(NormalizeCode("x = [1, 2,]\n"), NormalizeCode("x = [1, 2]\n"));
  EXPECT_NE(NormalizeCode("x = (1,)\n"), NormalizeCode("x = (1)\n"));
  EXPECT_NE(NormalizeCode("return (1,)\n"), NormalizeCode("return (1)\n"));
  EXPECT_NE(NormalizeCode("a[1,]\n"), NormalizeCode("a[1]\n"));
}

TEST(NormalizeCodeTest, InlineBodiesAndStringConcatenation) {
  EXPECT_EQ(NormalizeCode("def f(x) -> int: ...\n"), NormalizeCode("def f(x) -> int:\n    ...\n"));
  EXPECT_EQ(NormalizeCode("if a: b = {1: 2}\nc\n"), "0:if a :\n1:b = { 1 : 2 }\n0:c");
  EXPECT_EQ(NormalizeCode("x: int = 1\n"), "0:x : int = 1");
  EXPECT_EQ(NormalizeCode("f(f\"a \"\n  f\"{b}\")\n"), NormalizeCode("f(f\"a {b}\")\n"));
  EXPECT_NE(NormalizeCode("x = 'a' \"b\"\n"), NormalizeCode("x = 'ab'\n"));
  EXPECT_NE(NormalizeCode("x = b'a' 'b'\n"), NormalizeCode("x = b'ab'\n"));
}

TEST_F(EntityChangesTest, ClassifiesEachChange) {
  std::string before =
      "import os\n\n"
      "def keep(x):\n    return x\n\n"
      "def edit(x):\n    return x + 1\n\n"
      "def spaces(x):\n    return x*2\n\n"
      "def gone():\n    pass\n\n"
      "def old_name(a):\n    return a * 3\n\n"
      "class C:\n    def m(self):\n        return 1\n\n    def sig(self, a):\n        return a\n";
  std::string after =
      "import os\n\n"
      "def keep(x):\n    return x\n\n"
      "def edit(x):\n    return x + 2\n\n"
      "def spaces(x):\n    # doubled\n    return x * 2\n\n"
      "def new_name(a):\n    return a * 3\n\n"
      "def added(y):\n    def inner():\n        return y\n    return inner\n\n"
      "class C:\n    def m(self):\n        return 1\n\n    def sig(self, a, b=0):\n        return a\n";
  EXPECT_EQ(Diff({{"m.py", before + "\ndef tail():\n    return 0\n",
                  after + "\ndef tail():\n    return 0  # type: ignore\n"}}),
            (std::vector<std::string>{"modified m.py::edit", "cosmetic m.py::spaces",
                                      "deleted m.py::gone", "renamed m.py::new_name m.py::old_name",
                                      "new m.py::added", "modified m.py::C.sig",
                                      "cosmetic m.py::tail"}));
}

TEST_F(EntityChangesTest, WholeClassesAndFiles) {
  std::string before = "class Old:\n    def a(self):\n        pass\n";
  std::string after = "class New(Exception):\n    def b(self):\n        pass\n";
  EXPECT_EQ(Diff({{"k.py", before, after},
                  {"n.py", std::nullopt, "def f():\n    pass\n"},
                  {"d.py", "def g():\n    pass\n", std::nullopt},
                  {"README.rst", "x", "y"}}),
            (std::vector<std::string>{"deleted d.py::g", "new k.py::New", "deleted k.py::Old",
                                      "new k.py::New.b", "deleted k.py::Old.a", "new n.py::f"}));
  auto set = DiffEntities(*parser_, {{"n.py", std::nullopt, "x = 1\n"}, {"d.rst", "a", std::nullopt}});
  ASSERT_EQ(set.files.size(), 2u);
  EXPECT_EQ(set.files[0].path, "d.rst");
  EXPECT_EQ(set.files[0].status, "deleted");
  EXPECT_FALSE(set.files[0].python);
  EXPECT_EQ(set.files[1].status, "new");
}

TEST_F(EntityChangesTest, RenameNeedsSameParentAndBody) {
  std::string before = "class A:\n    def f(self):\n        return 1\n\nclass B:\n    pass\n";
  std::string after = "class A:\n    pass\n\nclass B:\n    def g(self):\n        return 1\n";
  EXPECT_EQ(Diff({{"r.py", before, after}}),
            (std::vector<std::string>{"deleted r.py::A.f", "new r.py::B.g"}));
  std::string b2 = "def f(x):\n    return x\n";
  std::string a2 = "def g(x):\n    return x + 1\n";
  EXPECT_EQ(Diff({{"r.py", b2, a2}}), (std::vector<std::string>{"deleted r.py::f", "new r.py::g"}));
}

TEST_F(EntityChangesTest, DecoratorAndSpans) {
  std::string before = "class A:\n    def f(self):\n        return 1\n";
  std::string after = "class A:\n    @property\n    def f(self):\n        return 1\n";
  auto set = DiffEntities(*parser_, {{"s.py", before, after}});
  ASSERT_EQ(set.entities.size(), 1u);
  const auto& c = set.entities[0];
  EXPECT_EQ(c.change, Change::kModified);
  EXPECT_EQ(c.start_line, 2);
  EXPECT_EQ(c.end_line, 4);
  EXPECT_EQ(after.substr(static_cast<size_t>(c.after_start),
                         static_cast<size_t>(c.after_end - c.after_start)),
            "@property\n    def f(self):\n        return 1");
  EXPECT_EQ(before.substr(static_cast<size_t>(c.before_start), 8), "def f(se");
}

}  // namespace
}  // namespace fbkit::groundtruth
