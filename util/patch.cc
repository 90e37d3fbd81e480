#include "util/patch.h"

#include <algorithm>
#include <cctype>

#include "util/strings.h"

namespace fbkit::util {
namespace {

// `line` without its line end.
std::string WithoutLineEnd(std::string_view line) {
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
  return std::string(line);
}

// "a/src/x.py\t2020-..." -> "src/x.py"; "/dev/null" -> "".
std::string HeaderPath(std::string_view line, bool strip_prefix) {
  std::string p = WithoutLineEnd(line.substr(4));
  if (auto tab = p.find('\t'); tab != std::string::npos) p.resize(tab);
  if (p.size() > 1 && p.front() == '"' && p.back() == '"') p = p.substr(1, p.size() - 2);
  if (p == "/dev/null") return "";
  if (strip_prefix && p.size() > 2 && p[1] == '/') p = p.substr(2);
  return p;
}

bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// Fills the paths of a section from its header lines.
void ReadHeaders(const std::vector<std::string_view>& lines, bool git, FilePatch* f) {
  bool saw_old = false, saw_new = false;
  for (auto line : lines) {
    if (StartsWith(line, "@@")) break;
    if (StartsWith(line, "--- ")) {
      f->old_path = HeaderPath(line, git || line.substr(4, 2) == "a/");
      saw_old = true;
    } else if (StartsWith(line, "+++ ")) {
      f->new_path = HeaderPath(line, git || line.substr(4, 2) == "b/");
      saw_new = true;
    } else if (StartsWith(line, "rename from ")) {
      f->old_path = WithoutLineEnd(line.substr(12));
    } else if (StartsWith(line, "rename to ")) {
      f->new_path = WithoutLineEnd(line.substr(10));
    } else if (StartsWith(line, "Binary files ") || StartsWith(line, "GIT binary patch")) {
      f->binary = true;
    }
  }
  if (git && !saw_old && !saw_new && !lines.empty()) {
    // "diff --git a/x b/x" without ---/+++ (mode change, empty new file, binary).
    std::string head = WithoutLineEnd(lines[0].substr(11));
    size_t mid = head.find(" b/");
    std::string a = head.substr(0, mid), b = mid == std::string::npos ? a : head.substr(mid + 1);
    if (f->old_path.empty()) f->old_path = a.size() > 2 ? a.substr(2) : a;
    if (f->new_path.empty()) f->new_path = b.size() > 2 ? b.substr(2) : b;
    for (auto line : lines) {
      if (StartsWith(line, "new file mode")) f->old_path.clear();
      if (StartsWith(line, "deleted file mode")) f->new_path.clear();
    }
  }
}

}  // namespace

Expected<std::vector<FilePatch>> ParsePatch(std::string_view diff) {
  auto lines = LinesWithEnds(diff);
  bool git = std::any_of(lines.begin(), lines.end(),
                         [](std::string_view l) { return StartsWith(l, "diff --git "); });
  std::vector<size_t> starts;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (git ? StartsWith(lines[i], "diff --git ")
            : (StartsWith(lines[i], "--- ") && i + 1 < lines.size() &&
               StartsWith(lines[i + 1], "+++ "))) {
      starts.push_back(i);
    }
  }
  std::vector<FilePatch> out;
  bool blank = std::all_of(diff.begin(), diff.end(),
                           [](char c) { return std::isspace(static_cast<unsigned char>(c)); });
  if (starts.empty()) {
    if (blank) return out;
    return util::Error{"not a unified diff (no file header)"};
  }
  for (size_t k = 0; k < starts.size(); ++k) {
    size_t end = k + 1 < starts.size() ? starts[k + 1] : lines.size();
    std::vector<std::string_view> sec(lines.begin() + static_cast<long>(starts[k]),
                                      lines.begin() + static_cast<long>(end));
    FilePatch f;
    for (auto l : sec) f.text += l;
    if (!f.text.empty() && f.text.back() != '\n') f.text += '\n';
    ReadHeaders(sec, git, &f);
    if (f.old_path.empty() && f.new_path.empty()) {
      return util::Error{"diff section " + std::to_string(k + 1) + " names no file (line " +
                         std::to_string(starts[k] + 1) + ")"};
    }
    out.push_back(std::move(f));
  }
  return out;
}

std::string JoinPatch(const std::vector<FilePatch>& files) {
  std::string out;
  for (const auto& f : files) out += f.text;
  return out;
}

}  // namespace fbkit::util
