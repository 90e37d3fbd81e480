#include "extract/eval/checks.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <regex>
#include <set>

#include "extract/taskdir/task_dir.h"
#include "runner/outcome.h"
#include "util/strings.h"

namespace fbkit::extract::eval {

namespace {

std::string_view Base(std::string_view path) {
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

}  // namespace

std::vector<std::string> TestFilesAmong(const std::vector<std::string>& changed,
                                        const std::set<std::string>& task_test_files) {
  std::vector<std::string> out;
  for (const auto& p : changed) {
    // Any file of test code, not only .py: a tests/__pycache__/*.pyc stands in for a helper.
    if (taskdir::IsTestCode(p, task_test_files)) out.push_back(p);
  }
  return out;
}

bool IsPytestConfigFile(const std::string& path, const std::set<std::string>& test_files) {
  std::string_view b = Base(path);
  if (b != "pytest.ini" && b != ".pytest.ini" && b != "tox.ini" && b != "setup.cfg" &&
      b != "pyproject.toml") {
    return false;
  }
  // pytest looks for its configuration from the test files' common directory upwards: a
  // file in the root or in any directory above a test file may become it.
  std::string dir = path.substr(0, path.size() - b.size());
  if (dir.empty()) return true;
  return std::any_of(test_files.begin(), test_files.end(),
                     [&](const std::string& t) { return t.starts_with(dir); });
}

bool DecidesAlone(const std::string& path) {
  std::string_view b = Base(path);
  return b == "pytest.ini" || b == ".pytest.ini";
}

std::string PytestConfig(std::string_view text) {
  std::string out;
  bool in = false;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    size_t first = line.find_first_not_of(" \t");
    if (first != std::string_view::npos && line[first] == '[') {
      in = line.find("pytest") != std::string_view::npos;
    }
    if (in) out.append(line).push_back('\n');
    start = end + 1;
  }
  return out;
}

bool IsCompiledFile(const std::string& path) {
  for (const char* ext : {".pyc", ".pyo", ".so", ".pyd", ".dylib", ".dll"}) {
    if (path.ends_with(ext)) return true;
  }
  return path.starts_with("__pycache__/") || path.find("/__pycache__/") != std::string::npos;
}

namespace {

// PEP 263's `^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)` on one line, scanned without a regex:
// libstdc++'s engine recurses once per character of `.*?`, and a long first comment (the
// patch's) overflowed fbkit's stack (red team round 12).
std::optional<std::string> CodingOf(std::string_view line) {
  size_t i = line.find_first_not_of(" \t\f");
  if (i == std::string_view::npos || line[i] != '#') return std::nullopt;
  auto name_char = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
  };
  for (size_t at = line.find("coding", i); at != std::string_view::npos;
       at = line.find("coding", at + 1)) {
    size_t j = at + 6;
    if (j >= line.size() || (line[j] != ':' && line[j] != '=')) continue;
    ++j;
    while (j < line.size() && (line[j] == ' ' || line[j] == '\t')) ++j;
    size_t k = j;
    while (k < line.size() && name_char(line[k])) ++k;
    if (k > j) return std::string(line.substr(j, k - j));
  }
  return std::nullopt;
}

}  // namespace

std::string HiddenSourceProblem(const std::string& path, std::string_view text, bool binary) {
  if (binary) return path + " is sent as a binary hunk (the diff shows no code)";
  // PEP 263: a `coding[:=]` comment on line 1 or 2.
  size_t second = text.find('\n');
  size_t end = second == std::string_view::npos ? text.size() : text.find('\n', second + 1);
  std::string head(text.substr(0, std::min(end, text.size())));
  for (const auto& line : util::Split(head, '\n')) {
    auto declared = CodingOf(line);
    if (!declared) continue;
    std::string name = *declared;
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    std::replace(name.begin(), name.end(), '_', '-');
    static const std::set<std::string> kPlain = {"utf-8", "utf8", "ascii", "us-ascii",
                                                 "utf-8-sig", "latin-1", "iso-8859-1"};
    if (!kPlain.count(name)) {
      return path + " declares the source encoding " + name +
             " (Python decodes other text than the diff shows)";
    }
    break;
  }
  return "";
}

bool IsStartupFile(const std::string& path) {
  std::string_view b = Base(path);
  if (b == "sitecustomize.py" || b == "usercustomize.py" || path.ends_with(".pth")) return true;
  // A module named like fbkit's own (its plugin, core, boot script or probe): fbkit binds
  // those names to its files, so such a module only shows an attempt to stand in for them.
  for (const auto& part : util::Split(path, '/')) {
    std::string stem = part.substr(0, part.find('.'));
    for (const char* own : {"fbkit_agent", "fbkit_core", "fbkit_boot", "fbkit_probe", "_fbkit_accel"}) {
      if (stem == own) return true;
    }
  }
  return path.find(".dist-info/") != std::string::npos ||
         path.find(".egg-info/") != std::string::npos;
}

std::vector<std::string> HookReasons(const std::set<std::pair<std::string, std::string>>& hooks,
                                     const std::set<std::string>& changed) {
  std::map<std::string, std::vector<std::string>> by_file;
  for (const auto& [file, hook] : hooks) {
    if (changed.count(file) && !hook.starts_with(runner::kInspects)) by_file[file].push_back(hook);
  }
  std::vector<std::string> out;
  for (const auto& [file, names] : by_file) {
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
    out.push_back(file + ", changed by the patch, implements pytest hooks: " + list);
  }
  return out;
}

std::vector<std::string> HookNotes(const std::set<std::pair<std::string, std::string>>& hooks,
                                   const std::set<std::string>& changed) {
  std::vector<std::string> out;
  for (const auto& [file, hook] : hooks) {
    if (changed.count(file) && hook.starts_with(runner::kInspects)) {
      out.push_back(file + ", changed by the patch, " + hook);
    }
  }
  return out;
}

std::vector<std::string> VanishedTests(const runner::TestRun& trace,
                                       const std::vector<std::string>& expected) {
  std::vector<std::string> out;
  for (const auto& id : expected) {
    std::string file = id.substr(0, id.find("::"));
    auto it = trace.files.find(file);
    if (it == trace.files.end() || it->second.status != runner::FileStatus::kOk) continue;
    const auto& f = it->second;
    if (f.tests.count(id)) continue;
    if (std::find(f.nodeids.begin(), f.nodeids.end(), id) != f.nodeids.end()) continue;
    out.push_back(id);
  }
  return out;
}

std::string ExitContradiction(const runner::TestRun& trace) {
  if (!trace.exitstatus) return "";
  bool bad = false;
  size_t tests = 0;
  for (const auto& [name, f] : trace.files) {
    if (f.status == runner::FileStatus::kTimeout || f.status == runner::FileStatus::kCrashed) {
      return "";  // the run did not finish normally: nothing to compare
    }
    bad = bad || f.status != runner::FileStatus::kOk;
    for (const auto& [id, t] : f.tests) {
      ++tests;
      bad = bad || !runner::P2PHolds(t.outcome);
    }
  }
  int status = *trace.exitstatus;
  if (trace.process_exit && *trace.process_exit != status) {
    return "the pytest process exited with " + std::to_string(*trace.process_exit) +
           " but its session ended with exit status " + std::to_string(status);
  }
  if (status == 0 && bad) return "pytest exit status 0 although tests failed or errored";
  if (status != 0 && !bad && tests > 0) {
    return "pytest exit status " + std::to_string(status) + " although every test passed";
  }
  return "";
}

namespace {

// The longest line read as a possible summary line.
constexpr size_t kMaxSummaryLine = 1024;

// The tests passed by the last summary line of each session block of `logs`; nullopt when a
// block has none.
std::optional<size_t> SummaryPassed(std::string_view logs) {
  static const std::regex kAnsi("\x1b\\[[0-9;]*[A-Za-z]");
  static const std::regex kSummary(
      R"(^=* ?((\d+ [a-z]+(, )?)+|no tests ran) in \d+(\.\d+)?s\b.*$)");
  static const std::regex kPassed(R"((\d+) passed)");
  size_t total = 0, blocks = 0;
  bool missing = false;
  std::optional<size_t> last;
  auto end_block = [&] {
    if (blocks > 0) {
      if (last) total = *last > SIZE_MAX - total ? SIZE_MAX : total + *last;
      else missing = true;
    }
    last.reset();
  };
  size_t b = 0;
  while (b < logs.size()) {
    size_t e = std::min(logs.find('\n', b), logs.size());
    std::string_view raw = logs.substr(b, e - b);
    b = e + 1;
    // The tested code prints what it likes: no summary or session line is this long, and
    // libstdc++'s regex engine recurses once per character (a 1 MB line overflowed the
    // stack: red team round 12).
    if (raw.size() > kMaxSummaryLine) continue;
    std::string line = std::regex_replace(std::string(raw), kAnsi, "");
    if (line.starts_with("==== session-")) {
      end_block();
      ++blocks;
      continue;
    }
    if (!std::regex_match(line, kSummary)) continue;
    std::smatch m;
    // A count past what fits saturates (strtoull): a forged summary then contradicts.
    last = std::regex_search(line, m, kPassed) ? std::strtoull(m[1].str().c_str(), nullptr, 10)
                                               : 0;
  }
  end_block();
  if (blocks == 0 || missing) return std::nullopt;
  return total;
}

}  // namespace

std::string SummaryContradiction(const runner::TestRun& trace, std::string_view logs) {
  size_t passed = 0;
  for (const auto& [name, f] : trace.files) {
    if (f.status == runner::FileStatus::kTimeout || f.status == runner::FileStatus::kCrashed) {
      return "";
    }
    for (const auto& [id, t] : f.tests) passed += t.outcome == runner::Outcome::kPassed;
  }
  auto summary = SummaryPassed(logs);
  if (!summary || passed <= *summary) return "";
  return "pytest's own summary counts " + std::to_string(*summary) + " tests passed, its " +
         "journal " + std::to_string(passed) + " (the journal was rewritten?)";
}

std::vector<std::string> LibraryReads(std::string_view log, const std::set<std::string>& packages,
                                      size_t limit) {
  static const std::regex kRead(
      R"((^|[^\w])(cat|less|more|head|tail|sed|awk|grep|egrep|rg|nl|view|vim?|nano|emacs|bat|xxd|od|strings|cp|find|ls|tree|open|read_text|read_bytes|getsource|getsourcefile|str_replace_editor|view_file|read_file)\b)");
  std::vector<std::string> out;
  size_t start = 0;
  while (start < log.size() && out.size() < limit) {
    size_t end = log.find('\n', start);
    if (end == std::string_view::npos) end = log.size();
    std::string_view line = log.substr(start, end - start);
    start = end + 1;
    bool mentions = false;
    for (const auto& pkg : packages) {
      for (const char* dir : {"site-packages/", "dist-packages/"}) {
        size_t at = line.find(std::string(dir) + pkg);
        if (at == std::string_view::npos) continue;
        size_t after = at + std::string_view(dir).size() + pkg.size();
        if (after >= line.size() || !(std::isalnum(static_cast<unsigned char>(line[after])) ||
                                      line[after] == '_' || line[after] == '-')) {
          mentions = true;
        }
      }
    }
    if (!mentions) continue;
    std::string text(line.substr(0, 300));
    if (std::regex_search(text, kRead)) out.push_back(text);
  }
  return out;
}

}  // namespace fbkit::extract::eval
