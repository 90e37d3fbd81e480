// The fbkit.entities/1 format: one compact JSON object per file (a "fragment", also what the
// cache stores) and the document around them. Keys are sorted, so output is deterministic.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "parser/entity.h"
#include "parser/source_files.h"
#include "util/expected.h"
#include "util/json_writer.h"

namespace fbkit::parser {

inline constexpr std::string_view kEntitiesSchema = "fbkit.entities/1";

// Appends the file's JSON object to out.
void AppendFileTableJson(const FileTable& table, std::string* out);

// The whole document: {"errors":[...],"files":[<fragments, one per line>],"root":..,"schema":..}.
std::string EntitiesDocument(std::string_view root, const std::vector<std::string_view>& fragments,
                             const std::vector<FileError>& errors);

// Writes parse errors as the format does: [{column, line, message}, ...].
void WriteParseErrors(util::JsonWriter& w, const std::vector<ParseError>& errors);

// Reads one file object back (the inverse of AppendFileTableJson).
util::Expected<FileTable> ParseFileTableJson(std::string_view json);

// Reads a whole fbkit.entities/1 document.
util::Expected<std::vector<FileTable>> ParseEntitiesDocument(std::string_view json);

}  // namespace fbkit::parser
