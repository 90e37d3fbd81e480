// Small string helpers shared by the modules' messages.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fbkit::util {

// The last `n` bytes of `text`, prefixed with "..." when something was cut (for the end of
// a command's output in an error message).
std::string Tail(const std::string& text, size_t n);

// `s` with its ASCII letters in lower case (host names, distribution names, model answers).
std::string AsciiLower(std::string s);

// `s` without the spaces, tabs and line ends around it.
std::string Trim(std::string_view s);

// `s` with control characters other than newline and tab shown as '?': text from outside
// (an endpoint's answer, a tool's output) quoted in a message that goes to a terminal.
std::string Printable(std::string_view s);

// `s` as one word for /bin/sh: in single quotes, each ' written as '\''.
std::string ShellQuote(const std::string& s);

// `data` in base64 (RFC 4648, with padding), in lines of 76 characters each ending in '\n'
// (what `base64 -d` reads).
std::string Base64Lines(std::string_view data);

// The pieces of `s` between the `sep` characters (empty pieces kept: "a,,b" -> a, "", b;
// "" -> one empty piece).
std::vector<std::string> Split(const std::string& s, char sep);

// Views of the records of `s`, each ended by a `sep` (git's -z output): a final `sep` starts
// no record, "" holds none; empty records between separators are kept. No copy: a listing
// can be large.
std::vector<std::string_view> Records(std::string_view s, char sep);

// The lines of `s`, each with its '\n' (the last without one when `s` does not end in one).
std::vector<std::string_view> LinesWithEnds(std::string_view s);

// The lines of `text` with their 1-based numbers, '\n' removed (a last line without one
// counts; a final '\n' starts no line).
std::vector<std::pair<size_t, std::string>> NumberedLines(const std::string& text);

// Whether `name` can be one part of a path fbkit makes from it (an instance id, a run's
// directory): not empty, not "." or "..", at most 255 bytes, no '/' and no control character.
bool IsFileName(std::string_view name);

// Whether a root-relative path has a `tests` or `test` directory among its parts (a
// repository's test code by where it lives).
bool InTestsDirectory(std::string_view path);

}  // namespace fbkit::util
