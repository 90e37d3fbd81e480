#include "parser/docstring.h"

#include <gtest/gtest.h>

namespace fbkit::parser {
namespace {

TEST(DocstringTest, DecodeEscapes) {
  EXPECT_EQ(DecodeEscapes("a\\nb\\tc\\\\d\\'e\\\"f"), "a\nb\tc\\d'e\"f");
  EXPECT_EQ(DecodeEscapes("\\x41\\101\\u00e9\\U0001F600"), "AA\xC3\xA9\xF0\x9F\x98\x80");
  EXPECT_EQ(DecodeEscapes("line\\\ncontinued"), "linecontinued");
  EXPECT_EQ(DecodeEscapes("\\N{BULLET} \\d \\xZZ"), "\\N{BULLET} \\d \\xZZ");
  EXPECT_EQ(DecodeEscapes("trailing\\"), "trailing\\");
}

TEST(DocstringTest, CleanLikeInspectCleandoc) {
  EXPECT_EQ(CleanDocstring("  Summary.\n\n    Body\n      more\n    "), "Summary.\n\nBody\n  more");
  EXPECT_EQ(CleanDocstring("\n\n   Only\n"), "Only");
  EXPECT_EQ(CleanDocstring("A\n\tTabbed\n\tlines"), "A\nTabbed\nlines");
  EXPECT_EQ(CleanDocstring("A\r\n    b\r\n"), "A\nb");
  EXPECT_EQ(CleanDocstring(""), "");
}

}  // namespace
}  // namespace fbkit::parser
