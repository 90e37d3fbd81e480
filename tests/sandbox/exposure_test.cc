#include "sandbox/exposure.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "tests/testing/run.h"

namespace fbkit::sandbox {
namespace {

using testing::ScratchDir;

void Put(const std::string& path, const std::string& data) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  testing::WriteFileOrDie(path, data);
}

// A host whose system view shows `system` only (no walk of the real /usr in these tests).
HostInfo HostShowing(const std::string& system) {
  HostInfo h;
  h.system = {{system, ""}};
  return h;
}

Sandbox Bwrap() {
  Sandbox s;
  s.kind = SandboxKind::kBwrap;
  return s;
}

TEST(Exposure, FindsVendoredPackagesAndModulesOutsideTheWorkCopy) {
  ScratchDir dir;
  Put(dir / "usr/lib/sdk/third_party/jinja2/jinja2/__init__.py", "");
  Put(dir / "usr/lib/sdk/third_party/jinja2/jinja2/lexer.py", "x = 1\n");
  Put(dir / "usr/lib/pip/_vendor/six.py", "");
  Put(dir / "usr/lib/pip/_internal/utils/six.py", "");  // pip's own module of that name
  Put(dir / "usr/share/doc/jinja2/README", "no source here");  // not a copy
  Put(dir / "env/lib/python3.11/site-packages/jinja2/utils.py", "");
  Put(dir / "work/src/jinja2/__init__.py", "");  // the work copy itself
  Sandbox s = Bwrap();
  s.read_only = {dir / "env", dir / "work"};
  auto found = FindCopies(util::RealEnv(), s, HostShowing(dir / "usr"),
                          {"jinja2", "six"}, {dir / "work"});
  ASSERT_EQ(found.size(), 3u);
  EXPECT_EQ(found[0].path, dir / "env/lib/python3.11/site-packages/jinja2");
  EXPECT_EQ(found[1].path, dir / "usr/lib/pip/_vendor/six.py");
  EXPECT_EQ(found[1].package, "six");
  EXPECT_EQ(found[2].path, dir / "usr/lib/sdk/third_party/jinja2/jinja2");
  // What is hidden or not shown is not walked; without bubblewrap nothing is isolated anyway.
  s.hidden = {dir / "env"};
  EXPECT_EQ(FindCopies(util::RealEnv(), s, HostShowing(dir / "usr/share"), {"jinja2"},
                       {dir / "work"}).size(), 0u);
  s.kind = SandboxKind::kNone;
  EXPECT_TRUE(FindCopies(util::RealEnv(), s, HostShowing(dir / "usr"), {"jinja2"}, {}).empty());
}

// What holds the code without a .py file is a copy too (red team round 13): a zipped egg or a
// wheel, a directory of .pyc files alone, a copy behind a link the sandbox binds through.
TEST(Exposure, EggsWheelsCompiledCopiesAndLinkedRootsAreFound) {
  ScratchDir dir;
  Put(dir / "site/Shapes-0.1-py3.11.egg", "zip");
  Put(dir / "site/shapes_extra-1.0-py3-none-any.whl", "not ours: another distribution");
  Put(dir / "wheels/shapes-0.1-py3-none-any.whl", "zip");
  Put(dir / "pyc/shapes/vectors.pyc", "");
  Put(dir / "cache/shapes/__pycache__/vectors.cpython-311.pyc", "");
  Put(dir / "install-1.0/lib/shapes/vectors.py", "");
  Put(dir / "install-1.0/lib/__pycache__/shapes.cpython-311.pyc", "");  // bytecode alone
  Put(dir / "install-1.0/lib/__pycache__/shapes_extra.cpython-311.pyc", "not ours");
  Put(dir / "wheels/Shapes-0.2.tgz", "an sdist as PyPI names it");
  std::filesystem::create_symlink(dir / "install-1.0", dir / "current");
  Sandbox s = Bwrap();
  s.read_only = {dir / "site", dir / "wheels", dir / "pyc", dir / "cache", dir / "current"};
  auto found = FindCopies(util::RealEnv(), s, HostInfo{}, {"shapes"}, {});
  std::vector<std::string> paths;
  for (const auto& c : found) paths.push_back(c.path);
  EXPECT_EQ(paths, (std::vector<std::string>{
                       dir / "cache/shapes", dir / "install-1.0/lib/__pycache__/shapes.cpython-311.pyc",
                       dir / "install-1.0/lib/shapes", dir / "pyc/shapes",
                       dir / "site/Shapes-0.1-py3.11.egg",
                       dir / "wheels/Shapes-0.2.tgz", dir / "wheels/shapes-0.1-py3-none-any.whl"}));
}

// A walk cut short (past 256 levels) is no clean bill: refused unless copies are allowed.
TEST(Exposure, AWalkCutShortFailsClosed) {
  ScratchDir dir;
  std::string deep = dir / "deep";
  for (int i = 0; i < 260; ++i) deep += "/d";
  std::filesystem::create_directories(deep);
  Sandbox s = Bwrap();
  s.read_only = {dir / "deep"};
  std::string cut;
  EXPECT_TRUE(FindCopies(util::RealEnv(), s, HostInfo{}, {"shapes"}, {}, 20, &cut).empty());
  EXPECT_FALSE(cut.empty());
  auto refused = GuardCopies(util::RealEnv(), &s, HostInfo{}, {"shapes"}, {}, CopyPolicy::kHide, "t");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().find("could not be checked"), std::string::npos) << refused.error();
  EXPECT_TRUE(GuardCopies(util::RealEnv(), &s, HostInfo{}, {"shapes"}, {}, CopyPolicy::kAllow, "t").ok());
}

TEST(Exposure, RefusedByDefaultHiddenOrAllowedAsTheSpecSays) {
  ScratchDir dir;
  Put(dir / "usr/lib/vendor/shapes/__init__.py", "");
  Put(dir / "usr/lib/other/site-packages/shapes.py", "");
  HostInfo host = HostShowing(dir / "usr");
  Sandbox s = Bwrap();
  auto refused = GuardCopies(util::RealEnv(), &s, host, {"shapes"}, {}, CopyPolicy::kRefuse,
                             "the tests of task T");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().find("the tests of task T"), std::string::npos) << refused.error();
  EXPECT_NE(refused.error().find(dir / "usr/lib/vendor/shapes"), std::string::npos) << refused.error();
  EXPECT_NE(refused.error().find("exposed_copies"), std::string::npos) << refused.error();
  EXPECT_TRUE(s.masked.empty());
  auto hidden = GuardCopies(util::RealEnv(), &s, host, {"shapes"}, {}, CopyPolicy::kHide, "t");
  ASSERT_TRUE(hidden.ok()) << hidden.error();
  EXPECT_TRUE(hidden->empty());
  EXPECT_EQ(s.masked, (std::vector<std::string>{dir / "usr/lib/other/site-packages/shapes.py", dir / "usr/lib/vendor/shapes"}));
  EXPECT_FALSE(VisibleInSandbox(s, dir / "usr/lib/vendor/shapes/__init__.py"));
  Sandbox a = Bwrap();
  auto allowed = GuardCopies(util::RealEnv(), &a, host, {"shapes"}, {}, CopyPolicy::kAllow, "t");
  ASSERT_TRUE(allowed.ok());
  EXPECT_EQ(allowed->size(), 2u);
  EXPECT_TRUE(a.masked.empty());
}

// A masked copy is mounted over last, after the read-only paths it lies in: an empty
// read-only directory, or /dev/null for a file.
TEST(Exposure, MaskedPathsAreMountedLast) {
  ScratchDir dir;
  Put(dir / "site/shapes/__init__.py", "");
  Put(dir / "site/shapes.py", "");
  HostInfo host;
  host.bwrap = "/usr/bin/bwrap";
  Sandbox s = Bwrap();
  s.read_only = {dir / "site"};
  s.masked = {dir / "site/shapes", dir / "site/shapes.py"};
  auto args = BwrapArgs(s, host, "", {"true"});
  auto at = [&](const std::vector<std::string>& run) {
    auto it = std::search(args.begin(), args.end(), run.begin(), run.end());
    return it == args.end() ? -1 : static_cast<int>(it - args.begin());
  };
  int bind = at({"--ro-bind-try", dir / "site", dir / "site"});
  ASSERT_GE(bind, 0);
  EXPECT_GT(at({"--perms", "0555", "--size", "4096", "--tmpfs", dir / "site/shapes"}), bind);
  EXPECT_GT(at({"--ro-bind", "/dev/null", dir / "site/shapes.py"}), bind);
}

TEST(Exposure, PolicyNames) {
  for (auto p : {CopyPolicy::kRefuse, CopyPolicy::kHide, CopyPolicy::kAllow}) {
    auto parsed = ParseCopyPolicy(CopyPolicyName(p));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, p);
  }
  EXPECT_FALSE(ParseCopyPolicy("ignore").ok());
}

}  // namespace
}  // namespace fbkit::sandbox
