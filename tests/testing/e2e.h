// Shared by the end-to-end tests (compiled with FBKIT_FB_GRAPH and FBKIT_SOURCE_DIR, and some
// with FBKIT_FB_EXTRACT, FBKIT_FB_RACE, FBKIT_INFER_DATA): where the binaries and fixtures are.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

namespace fbkit::testing {

inline const std::string kBinary = FBKIT_FB_GRAPH;
inline const std::string kSource = FBKIT_SOURCE_DIR;
#ifdef FBKIT_FB_EXTRACT
inline const std::string kExtract = FBKIT_FB_EXTRACT;
#endif
#ifdef FBKIT_FB_RACE
inline const std::string kRace = FBKIT_FB_RACE;
#endif
#ifdef FBKIT_INFER_DATA
// The tasks tests/cli/make_tasks.sh makes once for the suites (ctest fixture infer_tasks).
inline const std::string kTasks = std::string(FBKIT_INFER_DATA) + "/tasks";
#endif
// The interpreter the suites run under: Debian's, which sees Debian's pytest.
inline const std::string kPython = "/usr/bin/python3";

inline std::string Fixture(const std::string& name) { return kSource + "/fixtures/" + name; }

// The command prefix that runs an fbkit command as an ordinary user (nobody), from root.
inline const std::vector<std::string> kAsNobody = {"/usr/bin/setpriv", "--reuid=65534",
                                                   "--regid=65534", "--clear-groups", "--"};

// Gives `dir` and every file below it to nobody, for an fbkit run as that user.
inline void GiveToNobody(const std::string& dir) {
  ::lchown(dir.c_str(), 65534, 65534);
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    ::lchown(e.path().c_str(), 65534, 65534);
  }
}

}  // namespace fbkit::testing
