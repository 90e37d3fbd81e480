// Docstrings derived from code: parameters with their kinds, annotations, defaults and the
// types the tests observed, returns / yields (with the returned expressions), raised
// exceptions, attributes set, nested functions, names used; never empty, and never a line
// that only restates the name or kind ("Function `parse`.": issue 66).
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
  std::string Describe(const std::string& source, const std::string& id,
                       const tracer::TypeMap* observed = nullptr,
                       const tracer::TypeMap* elsewhere = nullptr) {
    auto p = parser::PythonParser::Create();
    EXPECT_TRUE(p.ok());
    env_.AddFile("/r/pkg/m.py", source);
    std::vector<parser::FileTable> tables = {(*p)->Parse("pkg/m.py", "pkg.m", source, true)};
    repo_ = std::make_unique<Repo>(std::move(*Repo::Load(env_, "/r", std::move(tables))));
    auto ref = repo_->Find(id);
    EXPECT_TRUE(ref.has_value()) << id;
    return ref ? DescribeFromCode(*repo_, *ref, observed, elsewhere) : "";
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
            "Parameters:\n"
            "    text (positional or keyword; str)\n"
            "    strict (keyword-only; bool; default False)\n\n"
            "Returns:\n    int\n    returned expression(s): `helper(len(text))`\n\n"
            "Raises:\n    `ValueError`\n\nUses:\n    `helper`");
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
            "Derived from Base.\n\nConstructor parameters:\n"
            "    w (positional or keyword)\n    h (positional or keyword; default 1)\n\n"
            "Instance attributes:\n    `self.w`, `self.h`\n\nMethods:\n    `__init__`, `area`");
  EXPECT_EQ(Describe("class Box:\n    def area(self):\n        return 1\n", "pkg/m.py::Box.area"),
            "Takes no arguments.\n\nReturns:\n    returned expression(s): `1`");
  EXPECT_EQ(Describe("class Empty:\n    pass\n", "pkg/m.py::Empty"),
            "Constructed as its bases are; defines no methods of its own.");
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

// Unannotated parameters and results carry the types the F2P tests passed and got back (the
// trace's, matched by file, first line and name), else those other tests did, said as such;
// an annotation is not repeated by observed types.
TEST_F(DescribeTest, ObservedTypesWhereTheSourceHasNoAnnotation) {
  const char* src =
      "def scale(x, factor: int = 2, *rest):\n    return [x * factor]  # a list\n\n"
      "@staticmethod\ndef other(y):\n    return y\n";
  tracer::TypeMap f2p, others;
  f2p[{"pkg/m.py", 1, "scale"}] = {{{"x", {"int", "str"}}, {"factor", {"int"}}, {"*rest", {"float"}}},
                                   {"list"}};
  others[{"pkg/m.py", 4, "other"}] = {{{"y", {"bytes"}}}, {"bytes"}};
  std::string d = Describe(src, "pkg/m.py::scale", &f2p, &others);
  EXPECT_EQ(d,
            "Parameters:\n"
            "    x (positional or keyword; observed: int, str)\n"
            "    factor (positional or keyword; int; default 2)\n"
            "    rest (*args; observed: float)\n\n"
            "Returns:\n    observed: list\n    returned expression(s): `[x * factor]`");
  d = Describe(src, "pkg/m.py::other", &f2p, &others);
  EXPECT_NE(d.find("y (positional or keyword; observed in other tests: bytes)"), std::string::npos) << d;
  EXPECT_NE(d.find("Returns:\n    observed in other tests: bytes\n"), std::string::npos) << d;
  // Without a trace: the same description minus the observations.
  EXPECT_EQ(Describe(src, "pkg/m.py::other").find("observed"), std::string::npos);
  // Sampled calls that passed nothing through *rest say so (prettytable's **kwargs).
  f2p[{"pkg/m.py", 1, "scale"}] = {{{"x", {"int"}}}, {"list"}};
  d = Describe(src, "pkg/m.py::scale", &f2p, &others);
  EXPECT_NE(d.find("rest (*args; observed: none passed)"), std::string::npos) << d;
}

// A factory says what it defines inside and which attributes it gives what it returns.
TEST_F(DescribeTest, NestedFunctionsAndTheirAttributes) {
  std::string d = Describe(
      "def make(func):\n"
      "    def wrapper(*args):\n        return func(*args)\n"
      "    def clear():\n        pass\n"
      "    wrapper.clear = clear\n"
      "    return wrapper\n",
      "pkg/m.py::make");
  EXPECT_EQ(d,
            "Parameters:\n    func (positional or keyword)\n\n"
            "Returns:\n    returned expression(s): `wrapper`\n\n"
            "Sets:\n    `wrapper.clear`\n\n"
            "Defines inside:\n    `wrapper(*args)`, `clear()`");
}

}  // namespace
}  // namespace fbkit::extract::make
