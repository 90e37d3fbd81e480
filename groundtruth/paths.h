// The path rules RACE uses to tell a patch's test files and documentation from source.
#pragma once

#include <string_view>

namespace fbkit::groundtruth {

// Test files: a path component "tests"/"test"/"testing", a name test_*.py, *_test.py or
// conftest.py.
bool IsTestPath(std::string_view path);
// Documentation: under doc/ or docs/, or ending in .rst .md .txt .adoc, or a changelog /
// news / authors file without extension.
bool IsDocPath(std::string_view path);

}  // namespace fbkit::groundtruth
