// Shared by the end-to-end tests (compiled with FBKIT_FB_GRAPH and FBKIT_SOURCE_DIR): where
// the binary and the fixtures are.
#pragma once

#include <string>

namespace fbkit::testing {

inline const std::string kBinary = FBKIT_FB_GRAPH;
inline const std::string kSource = FBKIT_SOURCE_DIR;
// The interpreter the suites run under: Debian's, which sees Debian's pytest.
inline const std::string kPython = "/usr/bin/python3";

inline std::string Fixture(const std::string& name) { return kSource + "/fixtures/" + name; }

}  // namespace fbkit::testing
