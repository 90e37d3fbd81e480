// Docstring text: Python string-literal escapes decoded and indentation cleaned the way
// inspect.cleandoc / ast.get_docstring do it.
#pragma once

#include <string>
#include <string_view>

namespace fbkit::parser {

// Decodes \n \t \\ \' \" \a \b \f \v \r, \xhh, \ooo, \uXXXX, \UXXXXXXXX and backslash-newline;
// unknown escapes (and \N{...}) are kept as written, like CPython does for unknown ones.
std::string DecodeEscapes(std::string_view body);

// Tabs expanded to 8 columns, the first line stripped of leading blanks, the common
// indentation of the other lines removed, leading and trailing blank lines dropped.
std::string CleanDocstring(std::string_view text);

}  // namespace fbkit::parser
