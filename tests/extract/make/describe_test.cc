// Docstrings derived from code: parameters with their kinds, annotations and defaults,
// returns / yields, raised exceptions, attributes set, names used; never empty.
#include "extract/make/describe.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "parser/python_parser.h"
#include "tests/testing/fake_env.h"

namespace fbkit::extract::make {
namespace {

TEST(ParseParametersTest, KindsAnnotationsDefaultsAndReturn) {
  std::string returns;
  auto ps = ParseParameters("(a, /, b: int = 1, *args, c: dict[str, int] = {'x': 1}, **kw) -> str",
                            &returns);
  ASSERT_EQ(ps.size(), 5u);
  EXPECT_EQ(ps[0].name, "a");
  EXPECT_EQ(ps[0].kind, "positional-only");
  EXPECT_EQ(ps[1].name, "b");
  EXPECT_EQ(ps[1].kind, "positional or keyword");
  EXPECT_EQ(ps[1].annotation, "int");
  EXPECT_EQ(ps[1].default_value, "1");
  EXPECT_EQ(ps[2].kind, "*args");
  EXPECT_EQ(ps[3].kind, "keyword-only");
  EXPECT_EQ(ps[3].annotation, "dict[str, int]");
  EXPECT_EQ(ps[3].default_value, "{'x': 1}");
  EXPECT_EQ(ps[4].kind, "**kwargs");
  EXPECT_EQ(returns, "str");
  ps = ParseParameters("(*, key=None)", &returns);
  ASSERT_EQ(ps.size(), 1u);
  EXPECT_EQ(ps[0].kind, "keyword-only");
  EXPECT_EQ(returns, "");
  EXPECT_TRUE(ParseParameters("()", &returns).empty());
}

class DescribeTest : public ::testing::Test {
 protected:
  std::string Describe(const std::string& source, const std::string& id) {
    auto p = parser::PythonParser::Create();
    EXPECT_TRUE(p.ok());
    env_.AddFile("/r/pkg/m.py", source);
    std::vector<parser::FileTable> tables = {(*p)->Parse("pkg/m.py", "pkg.m", source, true)};
    repo_ = std::make_unique<Repo>(std::move(*Repo::Load(env_, "/r", std::move(tables))));
    auto ref = repo_->Find(id);
    EXPECT_TRUE(ref.has_value()) << id;
    return ref ? DescribeFromCode(*repo_, *ref) : "";
  }
  testing::FakeEnv env_;
  std::unique_ptr<Repo> repo_;
};

TEST_F(DescribeTest, AFunctionsParametersReturnsRaisesAndUses) {
  std::string d = Describe(
      "def helper(x):\n    return x\n\n"
      "def parse(text: str, *, strict: bool = False) -> int:\n"
      "    if not text:\n        raise ValueError('empty')\n"
      "    return helper(len(text))\n",
      "pkg/m.py::parse");
  EXPECT_EQ(d,
            "Function `parse`.\n\nParameters:\n"
            "    text (positional or keyword; str)\n"
            "    strict (keyword-only; bool; default False)\n\n"
            "Returns:\n    int\n\nRaises:\n    `ValueError`\n\nUses:\n    `helper`");
}

TEST_F(DescribeTest, AGeneratorAndAFunctionWithoutReturnSayWhatTheyGive) {
  EXPECT_NE(Describe("def gen(n):\n    yield n\n", "pkg/m.py::gen").find("Yields:"),
            std::string::npos);
  EXPECT_NE(Describe("def nothing():\n    pass\n", "pkg/m.py::nothing")
                .find("Takes no arguments.\n\nReturns:\n    None"),
            std::string::npos);
}

TEST_F(DescribeTest, AClassItsBasesConstructorAttributesAndMethods) {
  std::string d = Describe(
      "class Base:\n    pass\n\n"
      "class Box(Base):\n"
      "    def __init__(self, w, h=1):\n        self.w = w\n        self.h = h\n"
      "        self.w == 2\n"
      "    def area(self):\n        return self.w * self.h\n",
      "pkg/m.py::Box");
  EXPECT_EQ(d,
            "Class `Box`, derived from Base.\n\nConstructor parameters:\n"
            "    w (positional or keyword)\n    h (positional or keyword; default 1)\n\n"
            "Instance attributes:\n    `self.w`, `self.h`\n\nMethods:\n    `__init__`, `area`");
  EXPECT_EQ(Describe("class Box:\n    def area(self):\n        return 1\n", "pkg/m.py::Box.area"),
            "Method `Box.area`.\n\nTakes no arguments.\n\nReturns:\n    a value (not annotated)");
}

// What the scans read is code: a help string or a comment that says "raise" or "return"
// raises and returns nothing (the words were once taken for an exception named `an`).
TEST_F(DescribeTest, StringsAndCommentsAreNotCode) {
  std::string d = Describe(
      "def configure(parser):\n"
      "    # return early? no: raise nothing here\n"
      "    parser.add_argument('-W', help='raise an exception on warnings')\n"
      "    parser.add_argument('-q', help=\"\"\"return quietly\"\"\")\n",
      "pkg/m.py::configure");
  EXPECT_EQ(d.find("Raises"), std::string::npos) << d;
  EXPECT_NE(d.find("Returns:\n    None"), std::string::npos) << d;
}

}  // namespace
}  // namespace fbkit::extract::make
