#include "parser/python_parser.h"

#include <gtest/gtest.h>

#include <string>

namespace fbkit::parser {
namespace {

class PythonParserTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto p = PythonParser::Create();
    ASSERT_TRUE(p.ok()) << p.error();
    parser_ = std::move(*p);
  }
  FileTable Parse(const std::string& src, const std::string& path = "pkg/mod.py") {
    return parser_->Parse(path, "pkg.mod", src);
  }
  static const Entity* Find(const FileTable& t, const std::string& id) {
    for (const auto& e : t.entities) {
      if (e.id == id) return &e;
    }
    return nullptr;
  }
  std::unique_ptr<PythonParser> parser_;
};

// Untrusted source nested past any real file's depth is refused with a parse error, before
// tree-sitter or a recursive walk sees it (red team round 12: 66,000 unclosed brackets
// corrupted tree-sitter's heap, 100,000 nested lists overflowed the walk's stack).
TEST_F(PythonParserTest, SourceNestedTooDeepIsAParseErrorNotACrash) {
  for (const std::string& src :
       {"x = " + std::string(100000, '[') + "1" + std::string(100000, ']') + "\n",
        "x = " + std::string(70000, '(') + "\n"}) {
    FileTable t = Parse(src);
    ASSERT_EQ(t.parse_errors.size(), 1u);
    EXPECT_EQ(t.parse_errors[0].message, "brackets nest more than 5000 deep");
  }
  std::string chain = "x = a";
  for (int i = 0; i < 5000; ++i) chain += ".b";
  FileTable deep = Parse(chain + "\n");
  ASSERT_EQ(deep.parse_errors.size(), 1u);
  EXPECT_EQ(deep.parse_errors[0].message, "its syntax nests more than 3000 levels deep");
  // A file of ordinary depth is as before.
  FileTable ok = Parse("x = [[[(1, {2: 3})]]]\n\n\ndef f():\n    return a.b.c.d\n");
  EXPECT_TRUE(ok.parse_errors.empty());
}

TEST_F(PythonParserTest, ModuleEntityComesFirst) {
  FileTable t = Parse("\"\"\"Doc.\"\"\"\nx = 1\n");
  ASSERT_EQ(t.entities.size(), 1u);
  const Entity& m = t.entities[0];
  EXPECT_EQ(m.id, "pkg/mod.py::<module>");
  EXPECT_EQ(m.kind, EntityKind::kModule);
  EXPECT_EQ(m.name, "mod");
  EXPECT_EQ(m.qualname, "<module>");
  EXPECT_EQ(m.parent, "");
  EXPECT_EQ(m.start_line, 1);
  EXPECT_EQ(m.end_line, 2);
  EXPECT_EQ(m.end_byte, 17);
  EXPECT_EQ(m.docstring, "Doc.");
}

TEST_F(PythonParserTest, NestedQualnamesKindsAndParents) {
  FileTable t = Parse(
      "class Outer:\n"
      "    class Inner:\n"
      "        def m(self):\n"
      "            def helper():\n"
      "                class Local:\n"
      "                    def lm(self): pass\n"
      "                return Local\n"
      "            return helper\n"
      "def f():\n"
      "    def g():\n"
      "        pass\n");
  std::vector<std::string> ids;
  for (const auto& e : t.entities) ids.push_back(e.id + " " + EntityKindName(e.kind));
  EXPECT_EQ(ids, (std::vector<std::string>{
                     "pkg/mod.py::<module> module", "pkg/mod.py::Outer class",
                     "pkg/mod.py::Outer.Inner class", "pkg/mod.py::Outer.Inner.m method",
                     "pkg/mod.py::Outer.Inner.m.helper function",
                     "pkg/mod.py::Outer.Inner.m.helper.Local class",
                     "pkg/mod.py::Outer.Inner.m.helper.Local.lm method", "pkg/mod.py::f function",
                     "pkg/mod.py::f.g function"}));
  EXPECT_EQ(Find(t, "pkg/mod.py::f.g")->parent, "pkg/mod.py::f");
  EXPECT_EQ(Find(t, "pkg/mod.py::Outer")->parent, "pkg/mod.py::<module>");
  const Entity* helper = Find(t, "pkg/mod.py::Outer.Inner.m.helper");
  EXPECT_EQ(helper->start_line, 4);
  EXPECT_EQ(helper->end_line, 7);
}

TEST_F(PythonParserTest, DecoratedSpansStartAtFirstDecorator) {
  std::string src =
      "import functools\n"
      "\n"
      "@functools.lru_cache(\n"
      "    maxsize=None)\n"
      "@staticmethod\n"
      "def f(x):\n"
      "    return x\n";
  FileTable t = Parse(src);
  const Entity* f = Find(t, "pkg/mod.py::f");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->start_line, 3);
  EXPECT_EQ(f->def_line, 6);
  EXPECT_EQ(f->end_line, 7);
  EXPECT_EQ(f->start_byte, static_cast<int64_t>(src.find('@')));
  EXPECT_EQ(f->end_byte, static_cast<int64_t>(src.size() - 1));
  EXPECT_EQ(f->decorators,
            (std::vector<std::string>{"functools.lru_cache(\n    maxsize=None)", "staticmethod"}));
}

TEST_F(PythonParserTest, EndLineExcludesTrailingCommentsAndBlankLines) {
  FileTable t = Parse(
      "def f():\n"
      "    x = 1\n"
      "    # trailing comment\n"
      "\n"
      "    # another\n"
      "\n"
      "y = 2\n");
  EXPECT_EQ(Find(t, "pkg/mod.py::f")->end_line, 2);
}

// A statement of a block ends where its code ends: a cut that removes the code of a block's
// only statement empties the block even when comments indented as its body follow.
TEST_F(PythonParserTest, BlockStatementsEndWhereTheirCodeEnds) {
  std::string src =
      "class Cat:\n"
      "    def f(self):\n"
      "        ...\n"
      "        # kept\n"
      "\n"
      "x = 1\n";
  auto blocks = parser_->Blocks(src);
  ASSERT_EQ(blocks.size(), 2u);
  ASSERT_EQ(blocks[0].statements.size(), 1u);  // the class body: one def, no comment
  EXPECT_EQ(src.substr(blocks[0].statements[0].first,
                       blocks[0].statements[0].second - blocks[0].statements[0].first),
            "def f(self):\n        ...");
}

// Python has no empty block; tree-sitter's recovery may parse one without an error, so the
// blocks say so and a cut can reject such text.
TEST_F(PythonParserTest, ABlockOfCommentsOnlyHasNoStatement) {
  auto blocks = parser_->Blocks("def f():\n    class C:\n            # gone\n\n    return C\n");
  bool empty = false;
  for (const auto& b : blocks) empty = empty || b.statements.empty();
  EXPECT_TRUE(empty);
}

TEST_F(PythonParserTest, EndLineExcludesLineContinuationBeforeComment) {
  FileTable t = Parse(
      "def f():\n"
      "    assert g(1), \\\n"
      "        2 \\\n"
      "        # comment\n"
      "\n"
      "def h(): pass\n");
  EXPECT_EQ(Find(t, "pkg/mod.py::f")->end_line, 3);
}

TEST_F(PythonParserTest, RedefinitionsAndOverloadsGetNumberedIds) {
  FileTable t = Parse(
      "class C:\n"
      "    @property\n"
      "    def x(self): return 1\n"
      "    @x.setter\n"
      "    def x(self, v): pass\n"
      "try:\n"
      "    def f(): pass\n"
      "except ImportError:\n"
      "    def f(): pass\n"
      "def f():\n"
      "    def g(): pass\n");
  std::vector<std::string> ids;
  for (const auto& e : t.entities) ids.push_back(e.id);
  EXPECT_EQ(ids, (std::vector<std::string>{"pkg/mod.py::<module>", "pkg/mod.py::C",
                                           "pkg/mod.py::C.x", "pkg/mod.py::C.x#2",
                                           "pkg/mod.py::f", "pkg/mod.py::f#2", "pkg/mod.py::f#3",
                                           "pkg/mod.py::f.g"}));
  EXPECT_EQ(Find(t, "pkg/mod.py::C.x#2")->qualname, "C.x");
  EXPECT_EQ(Find(t, "pkg/mod.py::f.g")->parent, "pkg/mod.py::f#3");
}

TEST_F(PythonParserTest, DefsInsideCompoundStatements) {
  FileTable t = Parse(
      "if X:\n    def a(): pass\nelif Y:\n    def b(): pass\nelse:\n    def c(): pass\n"
      "for i in r:\n    def d(): pass\nwhile w:\n    def e(): pass\n"
      "with m:\n    def f(): pass\n"
      "try:\n    pass\nfinally:\n    def g(): pass\n"
      "match v:\n    case 1:\n        def h(): pass\n");
  std::string names;
  for (const auto& e : t.entities) names += e.name;
  EXPECT_EQ(names, "modabcdefgh");
}

TEST_F(PythonParserTest, AsyncDefsAndMethods) {
  FileTable t = Parse(
      "async def f():\n    await g()\n"
      "class C:\n    async def m(self):\n        pass\n    def n(self): pass\n");
  EXPECT_TRUE(Find(t, "pkg/mod.py::f")->is_async);
  EXPECT_TRUE(Find(t, "pkg/mod.py::C.m")->is_async);
  EXPECT_FALSE(Find(t, "pkg/mod.py::C.n")->is_async);
  EXPECT_EQ(Find(t, "pkg/mod.py::C.m")->kind, EntityKind::kMethod);
}

TEST_F(PythonParserTest, SignaturesAsWritten) {
  FileTable t = Parse(
      "def f(a, /, b: int = 1, *args, c, d: str = 'x', **kw) -> dict[str, int]:\n    pass\n"
      "def g(\n    a,  # first\n    *,\n    b=2,\n):\n    pass\n"
      "class C(Base, metaclass=Meta):\n    pass\n"
      "class D:\n    pass\n"
      "def h() : pass\n");
  EXPECT_EQ(Find(t, "pkg/mod.py::f")->signature,
            "(a, /, b: int = 1, *args, c, d: str = 'x', **kw) -> dict[str, int]");
  EXPECT_EQ(Find(t, "pkg/mod.py::g")->signature, "(\n    a,  # first\n    *,\n    b=2,\n)");
  EXPECT_EQ(Find(t, "pkg/mod.py::C")->signature, "(Base, metaclass=Meta)");
  EXPECT_EQ(Find(t, "pkg/mod.py::D")->signature, "");
  EXPECT_EQ(Find(t, "pkg/mod.py::h")->signature, "()");
}

TEST_F(PythonParserTest, Docstrings) {
  FileTable t = Parse(
      "def a():\n    '''One line.'''\n"
      "def b():\n    \"\"\"Summary.\n\n        Indented\n    body.\n    \"\"\"\n"
      "def c():\n    r'''raw \\n kept'''\n"
      "def d():\n    'tab\\tand \\x41 \\u00e9'\n"
      "def e():\n    'con' 'cat'\n"
      "def f():\n    x = 'not a docstring'\n"
      "def g():\n    f'no {x}'\n"
      "def h():\n    # comment first\n    'still a docstring'\n");
  EXPECT_EQ(Find(t, "pkg/mod.py::a")->docstring, "One line.");
  EXPECT_EQ(Find(t, "pkg/mod.py::b")->docstring, "Summary.\n\n    Indented\nbody.");
  EXPECT_EQ(Find(t, "pkg/mod.py::c")->docstring, "raw \\n kept");
  EXPECT_EQ(Find(t, "pkg/mod.py::d")->docstring, "tab     and A \xC3\xA9");  // cleandoc expands tabs
  EXPECT_EQ(Find(t, "pkg/mod.py::e")->docstring, "concat");
  EXPECT_EQ(Find(t, "pkg/mod.py::f")->docstring, std::nullopt);
  EXPECT_EQ(Find(t, "pkg/mod.py::g")->docstring, std::nullopt);
  EXPECT_EQ(Find(t, "pkg/mod.py::h")->docstring, "still a docstring");
}

TEST_F(PythonParserTest, ImportsOfEveryForm) {
  FileTable t = Parse(
      "from __future__ import annotations\n"
      "import a.b as c, d\n"
      "from . import x\n"
      "from ..m import (a as b,\n    c)\n"
      "from m import *\n"
      "def f():\n    import os.path\n");
  ASSERT_EQ(t.imports.size(), 7u);
  const Import& fut = t.imports[0];
  EXPECT_EQ(fut.module, "__future__");
  EXPECT_TRUE(fut.is_from);
  ASSERT_EQ(fut.names.size(), 1u);
  EXPECT_EQ(fut.names[0].name, "annotations");
  EXPECT_EQ(t.imports[1].module, "a.b");
  EXPECT_FALSE(t.imports[1].is_from);
  EXPECT_EQ(t.imports[1].names[0].alias, "c");
  EXPECT_EQ(t.imports[2].module, "d");
  EXPECT_EQ(t.imports[2].names[0].alias, std::nullopt);
  EXPECT_EQ(t.imports[3].module, "");
  EXPECT_EQ(t.imports[3].level, 1);
  EXPECT_EQ(t.imports[3].names[0].name, "x");
  const Import& rel = t.imports[4];
  EXPECT_EQ(rel.module, "m");
  EXPECT_EQ(rel.level, 2);
  EXPECT_EQ(rel.line, 4);
  EXPECT_EQ(rel.end_line, 5);
  ASSERT_EQ(rel.names.size(), 2u);
  EXPECT_EQ(rel.names[0].name, "a");
  EXPECT_EQ(rel.names[0].alias, "b");
  EXPECT_EQ(rel.names[1].name, "c");
  EXPECT_EQ(t.imports[5].names[0].name, "*");
  EXPECT_EQ(t.imports[6].module, "os.path");
  EXPECT_EQ(t.imports[6].scope, "pkg/mod.py::f");
  EXPECT_EQ(t.imports[0].scope, "pkg/mod.py::<module>");
}

TEST_F(PythonParserTest, ImportNameSpansCoverAliases) {
  std::string src = "from m import (a as b, c)\n";
  FileTable t = Parse(src);
  const ImportName& n = t.imports[0].names[0];
  EXPECT_EQ(src.substr(n.start_byte, n.end_byte - n.start_byte), "a as b");
}

TEST_F(PythonParserTest, DunderAllLiteralAndExtensions) {
  FileTable t = Parse(
      "__all__ = ['a', \"b\"]\n__all__ += ('c',)\n__all__.extend(['d'])\n"
      "__all__.append('e')\n");
  ASSERT_TRUE(t.all.has_value());
  EXPECT_EQ(*t.all, (std::vector<std::string>{"a", "b", "c", "d", "e"}));
}

TEST_F(PythonParserTest, DunderAllDynamicIsNull) {
  EXPECT_FALSE(Parse("__all__ = other.__all__ + ['x']\n").all.has_value());
  EXPECT_FALSE(Parse("x = 1\n").all.has_value());
  EXPECT_FALSE(Parse("__all__ = ['a']\n__all__ += names\n").all.has_value());
  auto sum = Parse("__all__ = ['a'] + ['b']\n").all;
  ASSERT_TRUE(sum.has_value());
  EXPECT_EQ(*sum, (std::vector<std::string>{"a", "b"}));
}

TEST_F(PythonParserTest, ModuleLevelAssignments) {
  FileTable t = Parse(
      "a, (b, *c) = 1, (2, 3)\nx = y = 0\nz: int = 3\nw: int\nx += 1\nobj.attr = 2\n"
      "if True:\n    k = 1\ndef f():\n    local = 1\nclass C:\n    member = 1\n");
  std::vector<std::string> names;
  for (const auto& a : t.assignments) names.push_back(a.name + "@" + std::to_string(a.line));
  EXPECT_EQ(names, (std::vector<std::string>{"a@1", "b@1", "c@1", "x@2", "y@2", "z@3", "x@5",
                                             "k@8"}));
}

// A statement that reads what it binds needs an earlier binding of it.
TEST_F(PythonParserTest, AssignmentsThatReadTheirOwnNameRebind) {
  FileTable t = Parse(
      "f = wrap(f)\nn += 1\na, b = debug(b), 2\ng = h = make(h.x)\nk = 1\n"
      "m = [m2 for m2 in x]\n");
  std::vector<std::string> rebinds;
  for (const auto& a : t.assignments) {
    if (a.rebinds) rebinds.push_back(a.name + "@" + std::to_string(a.line));
  }
  EXPECT_EQ(rebinds, (std::vector<std::string>{"f@1", "n@2", "b@3", "h@4"}));
}

TEST_F(PythonParserTest, SyntaxErrorKeepsRecoveredEntities) {
  FileTable t = Parse(
      "def good():\n    return 1\n\n"
      "def bad(:\n    pass\n\n"
      "def also_good():\n    return 2\n");
  ASSERT_FALSE(t.parse_errors.empty());
  EXPECT_EQ(t.parse_errors[0].line, 4);
  EXPECT_NE(Find(t, "pkg/mod.py::good"), nullptr);
  const Entity* after = Find(t, "pkg/mod.py::also_good");
  ASSERT_NE(after, nullptr);
  EXPECT_EQ(after->def_line, 7);
  EXPECT_EQ(after->end_line, 8);
}

TEST_F(PythonParserTest, EmptyFile) {
  FileTable t = Parse("");
  ASSERT_EQ(t.entities.size(), 1u);
  EXPECT_EQ(t.entities[0].end_line, 1);
  EXPECT_EQ(t.entities[0].end_byte, 0);
  EXPECT_TRUE(t.parse_errors.empty());
}

TEST_F(PythonParserTest, BomShiftsBytesNotLines) {
  std::string src = "\xEF\xBB\xBF" "def f():\n    pass\n";
  FileTable t = Parse(src);
  const Entity* f = Find(t, "pkg/mod.py::f");
  ASSERT_NE(f, nullptr);
  EXPECT_TRUE(t.parse_errors.empty());
  EXPECT_EQ(f->start_byte, 3);
  EXPECT_EQ(f->start_line, 1);
  EXPECT_EQ(f->end_byte, static_cast<int64_t>(src.size() - 1));
}

TEST_F(PythonParserTest, CrlfAndTabs) {
  std::string src = "class C:\r\n\tdef m(self):\r\n\t\treturn 1\r\n\r\ndef g():\r\n\tpass\r\n";
  FileTable t = Parse(src);
  EXPECT_TRUE(t.parse_errors.empty());
  const Entity* m = Find(t, "pkg/mod.py::C.m");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->def_line, 2);
  EXPECT_EQ(m->end_line, 3);
  EXPECT_EQ(src.substr(m->start_byte, m->end_byte - m->start_byte),
            "def m(self):\r\n\t\treturn 1");
  EXPECT_EQ(Find(t, "pkg/mod.py::g")->def_line, 5);
}

TEST_F(PythonParserTest, InvalidUtf8WithoutCookieIsReported) {
  FileTable t = Parse("def f():\n    return 'caf\xE9'\n");
  ASSERT_EQ(t.parse_errors.size(), 1u);
  EXPECT_EQ(t.parse_errors[0].line, 2);
  EXPECT_EQ(t.parse_errors[0].column, 16);
  EXPECT_NE(t.parse_errors[0].message.find("0xE9"), std::string::npos);
  EXPECT_NE(Find(t, "pkg/mod.py::f"), nullptr);
}

TEST_F(PythonParserTest, InvalidUtf8WithCodingCookieIsFine) {
  FileTable t = Parse("# -*- coding: latin-1 -*-\ndef f():\n    return 'caf\xE9'\n");
  EXPECT_TRUE(t.parse_errors.empty());
  EXPECT_EQ(Find(t, "pkg/mod.py::f")->end_line, 3);
}

TEST_F(PythonParserTest, StartLineIsCPythonsFirstLineForOddDecorators) {
  std::string src = "@(\n    deco\n)\ndef a(): pass\n@\\\ndeco\ndef b(): pass\n";
  FileTable t = Parse(src);
  const Entity* a = Find(t, "pkg/mod.py::a");
  EXPECT_EQ(a->start_line, 2);  // the decorator expression, not the '@' line
  EXPECT_EQ(a->start_byte, 0);  // but the cut starts at the '@'
  EXPECT_EQ(Find(t, "pkg/mod.py::b")->start_line, 6);
}

TEST_F(PythonParserTest, LoneCarriageReturnsAreLineBreaks) {
  std::string src = "x = 1\rdef f():\r    return 1\r\rclass C:\r    pass\r";
  FileTable t = Parse(src);
  EXPECT_TRUE(t.parse_errors.empty());
  EXPECT_EQ(Find(t, "pkg/mod.py::f")->def_line, 2);
  EXPECT_EQ(Find(t, "pkg/mod.py::f")->end_line, 3);
  EXPECT_EQ(Find(t, "pkg/mod.py::C")->def_line, 5);
  EXPECT_EQ(t.entities[0].end_line, 6);
}

TEST_F(PythonParserTest, Latin1CodingDecodesNames) {
  std::string src = "# -*- coding: latin-1 -*-\ndef d\xE9j\xE0(x='\xE9'):\n    '''Caf\xE9.'''\n";
  FileTable t = Parse(src);
  EXPECT_TRUE(t.parse_errors.empty());
  const Entity* f = Find(t, "pkg/mod.py::d\xC3\xA9j\xC3\xA0");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->signature, "(x='\xC3\xA9')");
  EXPECT_EQ(f->docstring, "Caf\xC3\xA9.");
  EXPECT_EQ(f->end_byte, static_cast<int64_t>(src.size() - 1));
}

TEST_F(PythonParserTest, IdentifiersAreNfkcNormalisedLikeCPython) {
  // Fullwidth "ｗｉｄｅ" is "wide" to CPython; "u" + COMBINING DIAERESIS composes to "ü".
  FileTable t = Parse("def \xEF\xBD\x97\xEF\xBD\x89\xEF\xBD\x84\xEF\xBD\x85(): pass\n"
                      "def gru\xCC\x88n(): pass\n");
  EXPECT_NE(Find(t, "pkg/mod.py::wide"), nullptr);
  EXPECT_NE(Find(t, "pkg/mod.py::gr\xC3\xBCn"), nullptr);
}

TEST_F(PythonParserTest, Python2StatementsAreErrors) {
  FileTable t = Parse("print('ok')\ndef f():\n    print \"x\"\n    exec \"code\"\n");
  ASSERT_EQ(t.parse_errors.size(), 2u);
  EXPECT_EQ(t.parse_errors[0].line, 3);
  EXPECT_EQ(t.parse_errors[0].message, "Python 2 print statement");
  EXPECT_EQ(t.parse_errors[1].message, "Python 2 exec statement");
}

TEST_F(PythonParserTest, ParenthesisedDocstring) {
  FileTable t = Parse("def f():\n    (\"\"\"Paren doc.\"\"\")\n");
  EXPECT_EQ(Find(t, "pkg/mod.py::f")->docstring, "Paren doc.");
}

TEST_F(PythonParserTest, NonAsciiIdentifiers) {
  FileTable t = Parse("def gr\xC3\xBC\xC3\x9F" "e():\n    '''\xE6\x97\xA5\xE6\x9C\xAC'''\n");
  const Entity* f = Find(t, "pkg/mod.py::gr\xC3\xBC\xC3\x9F" "e");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->docstring, "\xE6\x97\xA5\xE6\x9C\xAC");
}

TEST_F(PythonParserTest, LambdasAreNotEntities) {
  FileTable t = Parse("f = lambda x: x\ndef g():\n    return lambda: 1\n");
  EXPECT_EQ(t.entities.size(), 2u);
}

TEST_F(PythonParserTest, HugeFile) {
  std::string src;
  for (int i = 0; i < 20000; ++i) {
    src += "def f" + std::to_string(i) + "(a, b=1):\n    return a + b\n\n";
  }
  FileTable t = Parse(src);
  ASSERT_EQ(t.entities.size(), 20001u);
  EXPECT_EQ(t.entities.back().def_line, 3 * 19999 + 1);
  EXPECT_EQ(t.entities.back().end_line, 3 * 19999 + 2);
}

TEST_F(PythonParserTest, StringTextsAreTheLiteralTextOfStrLiteralsOnly) {
  std::string src =
      "x = 'a.b'\n"
      "y = b'bytes.b'\n"
      "z = f\"pre {g('in.f')} post\"\n"
      "w = (r'raw\\.d'\n"
      "     \"joined\")\n"
      "# 'comment'\n"
      "v = ''\n";
  std::vector<std::string> got;
  for (auto [b, e] : parser_->StringTexts(src)) got.push_back(src.substr(b, e - b));
  EXPECT_EQ(got, (std::vector<std::string>{"a.b", "pre ", "in.f", " post", "raw\\.d", "joined"}));
  got.clear();
  for (auto [b, e] : parser_->StringTexts(src, true)) got.push_back(src.substr(b, e - b));
  EXPECT_EQ(got, (std::vector<std::string>{"bytes.b"}));
}

// What runs when the module is imported: assigned values, expression statements, decorators,
// class bodies (nested ones too) and methods' defaults; never a bound name, a function's body
// or default, or what an if block holds. Dotted names give their first part.
TEST_F(PythonParserTest, ImportTimeReadsAreWhatImportingRuns) {
  FileTable t = parser_->Parse("pkg/mod.py", "pkg.mod",
                               "TABLE = {'a': handler}\n"
                               "bound = 1\n"
                               "register(plugin)\n"
                               "@memo.cache\n"
                               "def f(x=module_default):\n"
                               "    return body_name\n"
                               "class C(Base):\n"
                               "    kind = kinds.pick()\n"
                               "    @prop.setter\n"
                               "    def m(self, y=method_default):\n"
                               "        return inner\n"
                               "    class Inner:\n"
                               "        z = nested\n"
                               "if flag:\n"
                               "    hidden = guarded\n",
                               true);
  EXPECT_EQ(t.import_time_reads,
            (std::vector<std::string>{"handler", "kinds", "memo", "method_default", "nested",
                                      "plugin", "prop", "register"}));
  EXPECT_TRUE(Parse("x = 1\n").import_time_reads.empty()) << "collected only with references";
}

// A function's references, and those it reads other than as a call's callee: a callee
// (`g()`, `m.k()`) is read only when the call runs; a value (`{1: g}`, `h`, `m.j`, an
// argument) is read whether or not anything calls it.
TEST_F(PythonParserTest, ValueReadsAreReferencesReadOtherThanAsACallee) {
  FileTable t = parser_->Parse("pkg/mod.py", "pkg.mod",
                               "def f(a):\n"
                               "    g()\n"
                               "    m.k(a)\n"
                               "    x = h\n"
                               "    y = m.j\n"
                               "    z = {1: g}\n"
                               "    run(cb)\n"
                               "    make()(a)\n",
                               true);
  ASSERT_EQ(t.entities.size(), 2u);
  const Entity& f = t.entities[1];
  EXPECT_EQ(f.references, (std::vector<std::string>{"a", "cb", "g", "h", "m.j", "m.k", "make",
                                                     "run", "x", "y", "z"}));
  EXPECT_EQ(f.value_reads,
            (std::vector<std::string>{"a", "cb", "g", "h", "m.j", "x", "y", "z"}));
}

}  // namespace
}  // namespace fbkit::parser
