#include "extract/dataset/export.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "tests/testing/run.h"

namespace fbkit::extract::dataset {
namespace {

// Keys as SWE-bench 5.0.2's parse_log_pytest_v2 computes them (the Python below is its code's
// steps), for ids real suites have: whitespace runs, escaped ANSI codes, a tab, a no-break space.
TEST(SweBenchLogKeyTest, TheKeysSweBenchsParserFilesTestsUnder) {
  EXPECT_EQ(SweBenchLogKey("tests/test_a.py::test_plain[1-2]"), "tests/test_a.py::test_plain[1-2]");
  EXPECT_EQ(SweBenchLogKey("t.py::test_required_argument[  -False-  ]"), "t.py::test_required_argument[ -False- ]");
  EXPECT_EQ(SweBenchLogKey("t.py::test_invalid_summary[Hello\\n    Again]"), "t.py::test_invalid_summary[Hello\\n Again]");
  EXPECT_EQ(SweBenchLogKey("t.py::test_style[\\x1b[30m-black]"), "t.py::test_style[\\x1b-black]");
  EXPECT_EQ(SweBenchLogKey("t.py::test_x[a\tb]"), "t.py::test_x[ab]");
  EXPECT_EQ(SweBenchLogKey("t.py::test_x[a\xc2\xa0" "b]"), "t.py::test_x[a b]");
  EXPECT_EQ(SweBenchLogKey("t.py::test_x[[12]m]"), "t.py::test_x[[12]m]");  // no digits-m run
}

// The same keys from SWE-bench's own steps, run by Python, over a sample of odd ids.
TEST(SweBenchLogKeyTest, AgreesWithThePythonOfTheParser) {
  const std::vector<std::string> ids = {"a  b", "x[\\x1b[0m]", "[1m[2mq", " lead", "trail ", "a\x01" "b",
                                        "u\xe2\x80\x83" "v", "t[ - ]", "m[123m456m]"};
  testing::ScratchDir dir;
  std::string script = dir / "key.py";
  FILE* f = std::fopen(script.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fputs(
      "import re, sys\n"
      "escapes = ''.join(chr(c) for c in range(1, 32))\n"
      "for raw in sys.stdin.buffer.read().split(b'\\0')[:-1]:\n"
      "    line = 'PASSED ' + raw.decode()\n"
      "    line = re.sub(r'\\[(\\d+)m', '', line).translate(str.maketrans('', '', escapes))\n"
      "    sys.stdout.write(' '.join(line.split()[1:]) + '\\0')\n",
      f);
  std::fclose(f);
  std::string input;
  for (const auto& id : ids) input += id + '\0';
  std::string in_file = dir / "in";
  f = std::fopen(in_file.c_str(), "wb");
  std::fwrite(input.data(), 1, input.size(), f);
  std::fclose(f);
  auto r = testing::RunCommand({"/bin/sh", "-c", "/usr/bin/python3 " + script + " < " + in_file});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> want;
  for (size_t b = 0, e; (e = r.out.find('\0', b)) != std::string::npos; b = e + 1) want.push_back(r.out.substr(b, e - b));
  ASSERT_EQ(want.size(), ids.size());
  for (size_t i = 0; i < ids.size(); ++i) EXPECT_EQ(SweBenchLogKey(ids[i]), want[i]) << ids[i];
}

}  // namespace
}  // namespace fbkit::extract::dataset
