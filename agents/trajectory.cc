#include "agents/trajectory.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "util/json_docs.h"
#include "util/patch.h"
#include "agents/run_dir.h"
#include "agents/trajectory_parts.h"
#include "util/strings.h"
#include "util/json_read.h"

namespace fbkit::agents {
namespace {

using json = nlohmann::json;

// ---- shell -------------------------------------------------------------------------------

struct SimpleCommand {
  std::vector<std::string> words;
  std::vector<std::string> outputs;  // > and >> targets
};

// Splits a command line into simple commands (on ; & | && || newlines and parentheses),
// removing quotes, collecting output redirections and skipping heredoc bodies.
class ShellSplitter {
 public:
  explicit ShellSplitter(const std::string& s) : s_(s) {}

  std::vector<SimpleCommand> Split() {
    while (i_ < s_.size()) Step();
    EndWord();
    EndCommand();
    return out_;
  }

 private:
  void Step() {
    char c = s_[i_];
    if (c == '\n') return EndWord(), EndCommand(), SkipHeredocs(), void(++i_);
    if (c == ' ' || c == '\t') return EndWord(), void(++i_);
    if (c == ';' || c == '&' || c == '|' || c == '(' || c == ')') {
      EndWord(), EndCommand();
      ++i_;
      return;
    }
    if (c == '>' || c == '<') return Redirect();
    if (c == '\'') return SingleQuoted();
    if (c == '"') return DoubleQuoted();
    if (c == '\\' && i_ + 1 < s_.size()) {
      if (s_[i_ + 1] != '\n') word_ += s_[i_ + 1];
      in_word_ = true;
      i_ += 2;
      return;
    }
    word_ += c, in_word_ = true, ++i_;
  }

  void SingleQuoted() {
    size_t end = s_.find('\'', i_ + 1);
    if (end == std::string::npos) end = s_.size();
    word_ += s_.substr(i_ + 1, end - i_ - 1);
    in_word_ = true;
    i_ = end + 1;
  }

  void DoubleQuoted() {
    ++i_;
    while (i_ < s_.size() && s_[i_] != '"') {
      if (s_[i_] == '\\' && i_ + 1 < s_.size()) ++i_;
      word_ += s_[i_++];
    }
    in_word_ = true;
    ++i_;
  }

  // > >> < << <<- N> N>&M &> : output targets are recorded, heredoc delimiters queued.
  void Redirect() {
    bool fd_prefix =
        in_word_ && !word_.empty() &&
        std::all_of(word_.begin(), word_.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
    if (fd_prefix) word_.clear(), in_word_ = false;
    EndWord();
    char c = s_[i_];
    size_t n = 1;
    while (i_ + n < s_.size() && s_[i_ + n] == c && n < 2) ++n;
    i_ += n;
    bool heredoc = c == '<' && n == 2;
    bool strip_tabs = heredoc && i_ < s_.size() && s_[i_] == '-';
    if (strip_tabs) ++i_;
    if (i_ < s_.size() && s_[i_] == '&') {  // >&2, <&0
      ++i_;
      while (i_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '-'))
        ++i_;
      return;
    }
    if (i_ < s_.size() && s_[i_] == '<') return void(++i_);  // <<< here-string: word follows
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t')) ++i_;
    std::string target = ReadWord();
    if (heredoc) {
      heredocs_.push_back({target, strip_tabs});
    } else if (c == '>') {
      cmd_.outputs.push_back(target);
    }
  }

  // One word at i_ (quotes removed), stopping at blanks and operators.
  std::string ReadWord() {
    std::string w;
    while (i_ < s_.size()) {
      char c = s_[i_];
      if (c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '&' || c == '|' || c == '<' ||
          c == '>' || c == '(' || c == ')') {
        break;
      }
      if (c == '\'' || c == '"') {
        size_t end = s_.find(c, i_ + 1);
        if (end == std::string::npos) end = s_.size();
        w += s_.substr(i_ + 1, end - i_ - 1);
        i_ = end + 1;
        continue;
      }
      w += c, ++i_;
    }
    return w;
  }

  // At a newline (i_): skips the bodies of the heredocs opened on the line it ends; i_ is
  // then at the newline after the last delimiter (or the end of the text).
  void SkipHeredocs() {
    for (const auto& [delim, strip] : heredocs_) {
      size_t pos = i_ + 1, end = s_.size();
      while (pos < s_.size()) {
        size_t eol = s_.find('\n', pos);
        size_t stop = eol == std::string::npos ? s_.size() : eol;
        std::string line = s_.substr(pos, stop - pos);
        if (strip) line.erase(0, line.find_first_not_of('\t'));
        if (line == delim) {
          end = stop;
          break;
        }
        pos = stop + 1;
      }
      i_ = end;
      if (i_ >= s_.size()) break;
    }
    heredocs_.clear();
  }

  void EndWord() {
    if (in_word_) cmd_.words.push_back(word_);
    word_.clear();
    in_word_ = false;
  }

  void EndCommand() {
    if (!cmd_.words.empty() || !cmd_.outputs.empty()) out_.push_back(std::move(cmd_));
    cmd_ = {};
  }

  const std::string& s_;
  size_t i_ = 0;
  std::string word_;
  bool in_word_ = false;
  SimpleCommand cmd_;
  std::vector<std::pair<std::string, bool>> heredocs_;
  std::vector<SimpleCommand> out_;
};

std::string Normalize(const std::string& path) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    std::string p =
        path.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    if (p == "..") {
      if (!parts.empty()) parts.pop_back();
    } else if (!p.empty() && p != ".") {
      parts.push_back(p);
    }
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  std::string out;
  for (const auto& p : parts) out += "/" + p;
  return out.empty() ? "/" : out;
}

// An absolute path for `word` in `cwd`; "" for words that are no plain path.
std::string Resolve(const std::string& word, const std::string& cwd) {
  if (word.empty() || word == "-" || word.find_first_of("$*?[]{}~`") != std::string::npos)
    return "";
  if (word == "/dev/null" || word.starts_with("/dev/") || word.starts_with("/proc/")) return "";
  return Normalize(word.starts_with("/") ? word : cwd + "/" + word);
}

std::string Base(const std::string& w) { return w.substr(w.find_last_of('/') + 1); }

// Operands of a command (words after the name that are no options); `with_arg` lists the
// options that take the next word.
std::vector<std::string> Operands(const std::vector<std::string>& words, size_t from,
                                  std::initializer_list<const char*> with_arg) {
  std::vector<std::string> out;
  for (size_t k = from; k < words.size(); ++k) {
    const std::string& w = words[k];
    if (w == "--") {
      out.insert(out.end(), words.begin() + static_cast<std::ptrdiff_t>(k) + 1, words.end());
      break;
    }
    if (w.starts_with("-") && w.size() > 1) {
      for (const char* o : with_arg) {
        if (w == o) ++k;
      }
      continue;
    }
    out.push_back(w);
  }
  return out;
}

void Effects(const SimpleCommand& c, std::string* cwd, ShellEffects* e) {
  for (const auto& t : c.outputs) {
    if (auto p = Resolve(t, *cwd); !p.empty()) e->edited.push_back(p);
  }
  size_t k = 0;
  while (k < c.words.size() && c.words[k].find('=') != std::string::npos &&
         !c.words[k].starts_with("-")) {
    ++k;  // VAR=value prefixes
  }
  while (k < c.words.size() &&
         (c.words[k] == "sudo" || c.words[k] == "time" || c.words[k] == "command"))
    ++k;
  if (k >= c.words.size()) return;
  std::string name = Base(c.words[k]);
  auto add = [&](std::vector<std::string>* to, const std::vector<std::string>& words) {
    for (const auto& w : words) {
      if (auto p = Resolve(w, *cwd); !p.empty()) to->push_back(p);
    }
  };
  if (name == "cd") {
    if (k + 1 < c.words.size()) {
      if (auto p = Resolve(c.words[k + 1], *cwd); !p.empty()) *cwd = p;
    }
  } else if (name == "cat" || name == "nl" || name == "less" || name == "more") {
    add(&e->opened, Operands(c.words, k + 1, {}));
  } else if (name == "head" || name == "tail") {
    add(&e->opened, Operands(c.words, k + 1, {"-n", "-c"}));
  } else if (name == "sed") {
    bool in_place = false, print_only = false, script_given = false;
    for (size_t j = k + 1; j < c.words.size(); ++j) {
      const auto& w = c.words[j];
      if (w.starts_with("-i") || w == "--in-place") in_place = true;
      bool short_flags = w.starts_with("-") && !w.starts_with("--") && !w.starts_with("-i");
      if (w == "--quiet" || (short_flags && w.size() <= 4 && w.find('n') != std::string::npos)) {
        print_only = true;
      }
      if (w == "-e" || w == "-f" || w == "--expression") script_given = true;
    }
    auto ops = Operands(c.words, k + 1, {"-e", "-f", "--expression", "--file", "-l"});
    if (!script_given && !ops.empty()) ops.erase(ops.begin());
    if (in_place) {
      add(&e->edited, ops);
    } else if (print_only) {
      add(&e->opened, ops);
    }
  } else if (name == "tee") {
    add(&e->edited, Operands(c.words, k + 1, {}));
  }
}


}  // namespace

// ---- shared ------------------------------------------------------------------------------

namespace parts {

void SortUnique(std::vector<std::string>* v) {
  std::sort(v->begin(), v->end());
  v->erase(std::unique(v->begin(), v->end()), v->end());
}

void Collector::Shell(const std::string& command, std::string* cwd) {
  auto e = AnalyzeShell(command, cwd);
  opened.insert(opened.end(), e.opened.begin(), e.opened.end());
  edited.insert(edited.end(), e.edited.begin(), e.edited.end());
}

void Collector::Open(const std::string& path, const std::string& cwd) {
  if (auto p = Resolve(path, cwd); !p.empty()) opened.push_back(p);
}

void Collector::Edit(const std::string& path, const std::string& cwd) {
  if (auto p = Resolve(path, cwd); !p.empty()) edited.push_back(p);
}

std::vector<std::string> Collector::Relative(const std::vector<std::string>& paths) const {
  std::vector<std::string> out;
  std::string r = Normalize(root);
  for (const auto& p : paths) {
    if (r != "/" && p.starts_with(r + "/")) out.push_back(p.substr(r.size() + 1));
  }
  SortUnique(&out);
  return out;
}

void Collector::Finish(Trajectory* t) const {
  t->root = root;
  t->opened = Relative(opened);
  t->edited = Relative(edited);
}

std::optional<int64_t> Int(const json& j, const char* key) {
  if (!j.is_object()) return std::nullopt;
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  // A count as an agent's log states it: 0..1e12 (a token count past that, a negative or a
  // float out of range is no count; converting it would overflow).
  double v = it->get<double>();
  if (!(v >= 0 && v <= 1e12)) return std::nullopt;
  return static_cast<int64_t>(v);
}

std::optional<double> Double(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

std::string Text(const json& content) {
  if (content.is_string()) return content.get<std::string>();
  std::string out;
  if (content.is_array()) {
    for (const auto& part : content) {
      if (part.is_object()) out += util::TextOr(part, "text");
    }
  }
  return out;
}

std::string Clip(const std::string& s, size_t n) {
  return s.size() <= n
             ? s
             : s.substr(0, n) + "\n[... " + std::to_string(s.size() - n) + " more characters]";
}

void PatchFiles(Trajectory* t) {
  if (auto files = util::ParsePatch(t->patch); files.ok()) {
    for (const auto& f : *files) t->patch_files.push_back(f.path());
  }
  SortUnique(&t->patch_files);
}

}  // namespace parts

namespace {

using namespace parts;

std::string StemOf(const std::string& path) {
  std::string base = path.substr(path.find_last_of('/') + 1);
  for (const char* ext : {".traj.json", ".traj", ".json"}) {
    if (base.ends_with(ext)) return base.substr(0, base.size() - std::string(ext).size());
  }
  return base;
}

// ---- mini-swe-agent ----------------------------------------------------------------------

// The longest text a regex reads here (see MiniActions).
constexpr size_t kMaxRegexText = 8192;

// mini-swe-agent's default action, "```bash\s*\n([\s\S]*?)\n```", scanned by hand: the first
// such block's body.
std::optional<std::string> BashBlock(const std::string& text) {
  for (size_t at = text.find("```bash"); at != std::string::npos; at = text.find("```bash", at + 1)) {
    size_t j = at + 7, newline = std::string::npos;
    while (j < text.size() && std::isspace(static_cast<unsigned char>(text[j]))) {
      if (text[j] == '\n') newline = j;
      ++j;
    }
    if (newline == std::string::npos) continue;
    size_t close = text.find("\n```", newline + 1);
    if (close == std::string::npos) continue;
    return text.substr(newline + 1, close - newline - 1);
  }
  return std::nullopt;
}

// `action_re`: the agent's configured action regex; nullopt: mini-swe-agent's default.
std::vector<std::string> MiniActions(const json& msg, const std::optional<std::regex>& action_re) {
  std::vector<std::string> out;
  if (msg.contains("extra") && msg["extra"].is_object() && msg["extra"].contains("actions")) {
    for (const auto& a : msg["extra"]["actions"]) {
      if (a.is_object() && a.contains("command") && a["command"].is_string()) {
        out.push_back(a["command"].get<std::string>());
      }
    }
    return out;
  }
  if (util::TextOr(msg, "role") != "assistant") return out;
  std::string text = Text(msg.value("content", json()));
  if (!action_re) {
    if (auto block = BashBlock(text)) out.push_back(*block);
    return out;
  }
  // libstdc++'s regex engine recurses once per character a match spans: an agent's long
  // message would overflow fbkit's stack (red team round 12), so a given regex reads short
  // messages only.
  std::smatch m;
  if (text.size() <= kMaxRegexText && std::regex_search(text, m, *action_re)) out.push_back(m[1]);
  return out;
}

Trajectory ReadMini(const json& j, const std::string& path) {
  Trajectory t;
  t.format = TrajectoryFormat::kMiniSweAgent;
  t.source = path;
  const json& info = j.at("info");
  t.instance_id = util::TextOr(j, "instance_id", StemOf(path));
  t.patch = util::TextOr(info, "submission");
  t.exit_status = util::TextOr(info, "exit_status");
  json stats = info.value("model_stats", json::object());
  t.api_calls = Int(stats, "api_calls");
  t.cost = Double(stats, "instance_cost");
  json config = info.value("config", json::object());
  Collector col;
  col.root = "/testbed";
  if (config.contains("environment") && config["environment"].is_object()) {
    col.root = util::TextOr(config["environment"], "cwd", col.root);
  }
  std::optional<std::regex> action_re;
  if (config.contains("agent") && config["agent"].is_object()) {
    std::string given = util::TextOr(config["agent"], "action_regex");
    if (!given.empty() && given != R"(```bash\s*\n(.*?)\n```)") {
      action_re.emplace(std::regex_replace(given, std::regex(R"(\(\.\*\?\))"), "([\\s\\S]*?)"));
    }
  }
  int64_t prompt = 0, completion = 0;
  bool usage = false;
  const json& messages = j.at("messages");
  for (size_t k = 0; k < messages.size(); ++k) {
    const json& m = messages[k];
    if (!m.is_object()) continue;
    if (k == 1 && util::TextOr(m, "role") == "user")
      t.problem_statement = Clip(Text(m.value("content", json())), 20000);
    if (m.contains("extra") && m["extra"].is_object() && m["extra"].contains("response")) {
      const json& r = m["extra"]["response"];
      if (r.is_object() && r.contains("usage") && r["usage"].is_object()) {
        const json& u = r["usage"];
        prompt += Int(u, "prompt_tokens").value_or(Int(u, "input_tokens").value_or(0));
        completion += Int(u, "completion_tokens").value_or(Int(u, "output_tokens").value_or(0));
        usage = true;
      }
    }
    for (const auto& cmd : MiniActions(m, action_re)) {
      std::string cwd = col.root;  // a fresh subshell per command
      col.Shell(cmd, &cwd);
      Turn turn{Clip(Text(m.value("content", json())), 1500), cmd, ""};
      if (k + 1 < messages.size() && messages[k + 1].is_object()) {
        turn.observation = Clip(Text(messages[k + 1].value("content", json())), 1500);
      }
      t.turns.push_back(std::move(turn));
    }
  }
  if (usage) t.prompt_tokens = prompt, t.completion_tokens = completion;
  col.Finish(&t);
  PatchFiles(&t);
  return t;
}

// ---- SWE-agent ---------------------------------------------------------------------------

json StateOf(const json& step) {
  if (!step.contains("state")) return json::object();
  const json& s = step["state"];
  if (s.is_object()) return s;
  if (s.is_string()) {
    json parsed = util::ParseUntrustedJson(s.get<std::string>());
    if (parsed.is_object()) return parsed;
  }
  return json::object();
}

// The words of a tool call's first line, quotes removed.
std::vector<std::string> FirstLineWords(const std::string& action) {
  std::string line = action.substr(0, action.find('\n'));
  auto cmds = ShellSplitter(line).Split();
  return cmds.empty() ? std::vector<std::string>{} : cmds.front().words;
}

struct SweState {
  Collector col;
  std::string cwd, open_file;
};

void SweAction(const std::string& action, const json& state, const std::string& observation,
               SweState* s) {
  std::string trimmed = action.substr(action.find_first_not_of(" \n\t") == std::string::npos
                                          ? action.size()
                                          : action.find_first_not_of(" \n\t"));
  auto words = FirstLineWords(trimmed);
  if (words.empty()) return;
  const std::string& tool = words[0];
  std::string state_open = util::TextOr(state, "open_file");
  if (tool == "open" && words.size() > 1) {
    s->col.Open(words[1], s->cwd);
    s->open_file = Resolve(words[1], s->cwd);
  } else if (tool == "create" && words.size() > 1) {
    s->col.Edit(words[1], s->cwd);
    s->open_file = Resolve(words[1], s->cwd);
  } else if (tool == "edit" || tool == "insert") {
    std::string target = !s->open_file.empty() ? s->open_file
                         : state_open != "n/a" ? state_open
                                               : "";
    if (!target.empty()) s->col.Edit(target, s->cwd);
  } else if (tool == "str_replace_editor" && words.size() > 2) {
    if (words[1] == "view") {
      if (observation.find("files and directories") == std::string::npos) {
        s->col.Open(words[2], s->cwd);
      }
    } else {
      s->col.Edit(words[2], s->cwd);
    }
  } else if (tool == "filemap" && words.size() > 1) {
    s->col.Open(words[1], s->cwd);
  } else if (tool == "goto" || tool == "scroll_up" || tool == "scroll_down" ||
             tool == "find_file" || tool == "search_dir" || tool == "search_file" ||
             tool == "submit" || tool.starts_with("exit") || tool.starts_with("_state")) {
    return;
  } else {
    s->col.Shell(trimmed, &s->cwd);
  }
}

Trajectory ReadSweAgent(const json& whole, const std::string& path) {
  const json& j = whole.contains("trajectory") || !whole.contains("attempts")
                      ? whole
                      : whole["attempts"].back();
  Trajectory t;
  t.format = TrajectoryFormat::kSweAgent;
  t.source = path;
  t.instance_id = StemOf(path);
  const json& info = whole.contains("info") ? whole.at("info") : j.at("info");
  if (info.contains("submission") && info["submission"].is_string()) t.patch = info["submission"];
  t.exit_status = util::TextOr(info, "exit_status");
  json stats = info.value("model_stats", json::object());
  t.prompt_tokens = Int(stats, "tokens_sent");
  t.completion_tokens = Int(stats, "tokens_received");
  t.api_calls = Int(stats, "api_calls");
  t.cost = Double(stats, "instance_cost");
  const json steps = j.value("trajectory", json::array());
  SweState s;
  s.col.root = "/testbed";
  for (const auto& step : steps) {
    std::string wd = util::TextOr(StateOf(step), "working_dir");
    if (!wd.empty()) {
      s.col.root = wd;
      break;
    }
  }
  s.cwd = s.col.root;
  for (const auto& h : j.value("history", json::array())) {  // the task: first real user turn
    if (util::TextOr(h, "role") == "user" && !h.value("is_demo", false)) {
      t.problem_statement = Clip(Text(h.value("content", json())), 20000);
      break;
    }
  }
  for (const auto& step : steps) {
    std::string action = util::TextOr(step, "action");
    std::string observation = util::TextOr(step, "observation");
    SweAction(action, StateOf(step), observation, &s);
    t.turns.push_back({Clip(util::TextOr(step, "thought"), 1500), action, Clip(observation, 1500)});
  }
  s.col.Finish(&t);
  PatchFiles(&t);
  return t;
}

// ---- OpenHands ---------------------------------------------------------------------------

std::vector<json> Events(const json& history) {
  std::vector<json> out;
  for (const auto& e : history) {
    if (e.is_array()) {  // before 2024-09: [action, observation] pairs
      for (const auto& x : e) out.push_back(x);
    } else {
      out.push_back(e);
    }
  }
  return out;
}

void IpythonEffects(const std::string& code, const std::string& cwd, Collector* col) {
  static const std::regex kEditor(
      R"(file_editor\(\*\*\{[^}]*'command':\s*'(\w+)'[^}]*'path':\s*'([^']+)')");
  static const std::regex kSkill(
      R"((open_file|create_file|edit_file_by_replace|insert_content_at_line|append_file)\(\s*['"]([^'"]+)['"])");
  if (code.size() > kMaxRegexText) return;  // see MiniActions
  for (auto it = std::sregex_iterator(code.begin(), code.end(), kEditor);
       it != std::sregex_iterator(); ++it) {
    if ((*it)[1] == "view") {
      col->Open((*it)[2], cwd);
    } else {
      col->Edit((*it)[2], cwd);
    }
  }
  for (auto it = std::sregex_iterator(code.begin(), code.end(), kSkill);
       it != std::sregex_iterator(); ++it) {
    if ((*it)[1] == "open_file") {
      col->Open((*it)[2], cwd);
    } else {
      col->Edit((*it)[2], cwd);
    }
  }
}

std::string OpenHandsRoot(const std::string& instruction, const std::vector<json>& events) {
  static const std::regex kUploaded(R"(<uploaded_files>\s*(/\S+?)/?\s*</uploaded_files>)");
  std::smatch m;
  size_t tag = instruction.find("<uploaded_files>");
  std::string window = tag == std::string::npos ? "" : instruction.substr(tag, 1024);  // see MiniActions
  if (std::regex_search(window, m, kUploaded)) return m[1];
  for (const auto& e : events) {
    std::string p = e.contains("args") && e["args"].is_object() ? util::TextOr(e["args"], "path") : "";
    if (p.starts_with("/workspace/")) {
      size_t slash = p.find('/', 11);
      return p.substr(0, slash);
    }
  }
  return "/workspace";
}

// Cost, tokens and API calls from OpenHands' `metrics`.
void OpenHandsMetrics(const json& j, Trajectory* t) {
  json metrics = j.value("metrics", json::object());
  if (!metrics.is_object()) return;
  t->cost = Double(metrics, "accumulated_cost");
  if (metrics.contains("accumulated_token_usage") &&
      metrics["accumulated_token_usage"].is_object()) {
    t->prompt_tokens = Int(metrics["accumulated_token_usage"], "prompt_tokens");
    t->completion_tokens = Int(metrics["accumulated_token_usage"], "completion_tokens");
  }
  if (metrics.contains("response_latencies") && metrics["response_latencies"].is_array()) {
    t->api_calls = static_cast<int64_t>(metrics["response_latencies"].size());
  }
}

// One OpenHands action of `kind`: what it read, edited or ran goes to `col` (`cwd` follows
// the shell); returns the turn's action text, or nullopt for an action that is no turn.
std::optional<std::string> OpenHandsAction(const std::string& kind, const json& args,
                                           const json* obs, Collector* col, std::string* cwd,
                                           bool* finished) {
  std::string p = util::TextOr(args, "path");
  if (kind == "read") {
    std::string obs_text = obs ? util::TextOr(*obs, "content") : "";
    if (obs_text.find("files and directories") == std::string::npos) col->Open(p, *cwd);
    return "read " + p;
  }
  if (kind == "edit") {
    std::string command = util::TextOr(args, "command");
    std::string code = util::TextOr(args, "translated_ipython_code");
    if (command == "view" ||
        (command.empty() && code.find("'command': 'view'") != std::string::npos)) {
      col->Open(p, *cwd);
    } else {
      col->Edit(p, *cwd);
    }
    return "edit " + (command.empty() ? std::string("") : command + " ") + p;
  }
  if (kind == "write") {
    col->Edit(p, *cwd);
    return "write " + p;
  }
  if (kind == "run") {
    if (args.value("is_input", false)) return std::nullopt;
    std::string command = util::TextOr(args, "command");
    col->Shell(command, cwd);
    if (obs && obs->contains("extras") && (*obs)["extras"].is_object()) {
      json meta = (*obs)["extras"].value("metadata", json::object());
      if (meta.is_object()) {
        std::string wd = util::TextOr(meta, "working_dir");
        if (!wd.empty()) *cwd = wd;
      }
    }
    return command;
  }
  if (kind == "run_ipython") {
    std::string code = util::TextOr(args, "code");
    IpythonEffects(code, *cwd, col);
    return code;
  }
  if (kind == "finish") {
    *finished = true;
    return "finish";
  }
  return std::nullopt;
}

Trajectory ReadOpenHands(const json& j, const std::string& path) {
  Trajectory t;
  t.format = TrajectoryFormat::kOpenHands;
  t.source = path;
  t.instance_id = j.at("instance_id").get<std::string>();
  if (j.contains("test_result") && j["test_result"].is_object()) {
    t.patch = util::TextOr(j["test_result"], "git_patch");
  }
  std::string instruction = util::TextOr(j, "instruction");
  t.problem_statement = Clip(instruction, 20000);
  OpenHandsMetrics(j, &t);
  auto events = Events(j.value("history", json::array()));
  std::map<int64_t, const json*> observation_of;
  for (const auto& e : events) {
    if (e.contains("observation") && e.contains("cause") && e["cause"].is_number()) {
      observation_of[e["cause"].get<int64_t>()] = &e;
    }
  }
  Collector col;
  col.root = OpenHandsRoot(instruction, events);
  std::string cwd = col.root;
  bool finished = false;
  for (const auto& e : events) {
    if (!e.contains("action") || !e["action"].is_string()) continue;
    json args = e.value("args", json::object());
    const json* obs = nullptr;
    if (e.contains("id") && e["id"].is_number()) {
      auto it = observation_of.find(e["id"].get<int64_t>());
      if (it != observation_of.end()) obs = it->second;
    }
    auto action = OpenHandsAction(e["action"], args, obs, &col, &cwd, &finished);
    if (!action) continue;
    std::string obs_text = obs ? util::TextOr(*obs, "content") : "";
    t.turns.push_back(
        {Clip(util::TextOr(args, "thought"), 1500), Clip(*action, 1500), Clip(obs_text, 1500)});
  }
  std::string error = util::TextOr(j, "error");
  t.exit_status = !error.empty() ? error : finished ? "finished" : "";
  col.Finish(&t);
  PatchFiles(&t);
  return t;
}

}  // namespace

const std::vector<TrajectoryFormat>& TrajectoryFormats() {
  using F = TrajectoryFormat;
  static const std::vector<F> all = {F::kMiniSweAgent, F::kSweAgent,   F::kOpenHands,
                                     F::kClaudeCode,   F::kCodex,      F::kGeminiCli,
                                     F::kTraeAgent,    F::kAutoCodeRover};
  return all;
}

const char* TrajectoryFormatName(TrajectoryFormat format) {
  switch (format) {
    case TrajectoryFormat::kMiniSweAgent: return "mini-swe-agent";
    case TrajectoryFormat::kSweAgent: return "swe-agent";
    case TrajectoryFormat::kOpenHands: return "openhands";
    case TrajectoryFormat::kClaudeCode: return "claude-code";
    case TrajectoryFormat::kCodex: return "codex";
    case TrajectoryFormat::kGeminiCli: return "gemini-cli";
    case TrajectoryFormat::kTraeAgent: return "trae-agent";
    case TrajectoryFormat::kAutoCodeRover: return "auto-code-rover";
  }
  return "";
}

std::optional<TrajectoryFormat> TrajectoryFormatFromName(std::string_view name) {
  for (TrajectoryFormat f : TrajectoryFormats()) {
    if (name == TrajectoryFormatName(f)) return f;
  }
  return std::nullopt;
}

const std::vector<std::pair<TrajectoryFormat, TrajectoryReader>>& AgentCliReaders() {
  using F = TrajectoryFormat;
  static const std::vector<std::pair<F, TrajectoryReader>> readers = {
      {F::kClaudeCode, parts::ReadClaudeCode},
      {F::kCodex, parts::ReadCodex},
      {F::kGeminiCli, parts::ReadGeminiCli},
      {F::kTraeAgent, parts::ReadTraeAgent},
      {F::kAutoCodeRover, parts::ReadAutoCodeRoverMeta}};
  return readers;
}

namespace {

// The model calls codex's session files under `sessions` record.
// Whether `path` is a directory itself, not a link to one (agents write these trees).
bool RealDir(util::Env& env, const std::string& path) {
  auto st = env.Stat(path, false);
  return st.ok() && st->type == util::FileType::kDirectory;
}

std::optional<int64_t> CodexSessionCalls(util::Env& env, const std::string& sessions) {
  if (!RealDir(env, util::DirName(sessions)) || !RealDir(env, sessions)) return std::nullopt;
  // An agent wrote these: read within a budget (files and bytes), or not at all.
  constexpr size_t kMaxFiles = 1000;
  auto files = util::FilesUnder(env, sessions, [](const std::string& name) {
    return name.starts_with("rollout-") && name.ends_with(".jsonl");
  }, kMaxFiles);
  if (!files.ok() || files->empty()) return std::nullopt;
  uint64_t budget = 64u << 20;
  if (files->size() > kMaxFiles) return std::nullopt;
  int64_t calls = 0;
  for (const auto& f : *files) {
    if (!f.starts_with(sessions + "/")) return std::nullopt;
    auto text = env.ReadUntrusted(sessions, f.substr(sessions.size() + 1), budget);
    if (!text.ok()) return std::nullopt;
    budget -= std::min<uint64_t>(budget, text->size());
    for (const auto& [n, line] : util::NumberedLines(*text)) {
      json j = util::ParseUntrustedJson(line);
      calls += j.is_object() && util::TextOr(j, "type") == "token_usage_record";
    }
  }
  return calls;
}

// What one AutoCodeRover task directory may cost to read, all its files together (red team
// round 12: one 16 MiB file hard-linked into 100 output_N directories took 93 s and 1.8 GB),
// and the output_N directories read (AutoCodeRover makes a handful).
constexpr uint64_t kAcrBudget = 64u << 20;
constexpr size_t kMaxAcrOutputs = 16;

// A file of an AutoCodeRover task directory, read as untrusted (bounded, no links), its size
// taken from `budget`.
util::Expected<std::string> AcrText(util::Env& env, const std::string& dir, const std::string& rel,
                                    uint64_t* budget) {
  auto text = env.ReadUntrusted(dir, rel, std::min<uint64_t>(*budget, 16u << 20));
  if (text.ok()) *budget -= std::min<uint64_t>(*budget, text->size());
  return text;
}

json AcrJson(util::Env& env, const std::string& dir, const std::string& rel, uint64_t* budget) {
  auto text = AcrText(env, dir, rel, budget);
  return text.ok() ? util::ParseUntrustedJson(*text) : json();
}

// What one AutoCodeRover search call reads: the file it names, if any.
std::string AcrCallFile(const json& call) {
  const json& args = call.contains("arguments") && call["arguments"].is_object()
                         ? call["arguments"]
                         : json::object();
  return util::TextOr(args, "file_path", util::TextOr(args, "file_name"));
}

// The rest of an AutoCodeRover task directory `dir` (app/main.py local-issue, nus-apr/auto-
// code-rover 3536ac29): the search calls (output_N/search/tool_call_layers.json; files
// named by *_in_file and get_code_around_line opened, with the bug locations' files), the
// extracted patches' files edited, the selected patch (selected_patch.json) as the patch,
// tokens and cost (cost.json; it counts no calls), and the status.
void AddAutoCodeRoverRun(util::Env& env, const std::string& dir, Trajectory* t) {
  Collector col;
  col.root = t->root;
  uint64_t budget = kAcrBudget;
  auto entries = env.ListDir(dir);
  std::vector<std::string> outputs;
  if (entries.ok()) {
    for (const auto& e : *entries) {
      if (e.type == util::FileType::kDirectory && e.name.starts_with("output_")) outputs.push_back(e.name);
    }
  }
  std::sort(outputs.begin(), outputs.end());
  if (outputs.size() > kMaxAcrOutputs) outputs.resize(kMaxAcrOutputs);
  for (const auto& out : outputs) {
    json layers = AcrJson(env, dir, out + "/search/tool_call_layers.json", &budget);
    for (const json& layer : layers.is_array() ? layers : json::array()) {
      for (const json& call : layer.is_array() ? layer : json::array()) {
        if (!call.is_object()) continue;
        std::string file = AcrCallFile(call);
        if (!file.empty()) col.Open(file, col.root);
        json args = call.contains("arguments") ? call["arguments"] : json::object();
        t->turns.push_back({"", util::TextOr(call, "func_name") + " " + args.dump(),
                            call.contains("call_ok") && call["call_ok"].is_boolean() &&
                                    call["call_ok"].get<bool>()
                                ? "ok"
                                : "failed"});
      }
    }
    json locations = AcrJson(env, dir, out + "/search/bug_locations_after_process.json", &budget);
    for (const json& loc : locations.is_array() ? locations : json::array()) {
      std::string file = util::TextOr(loc, "rel_file_path");
      if (!file.empty()) col.Open(file, col.root);
    }
    auto files = env.ListDir(util::JoinPath(dir, out));
    for (const auto& f : files.ok() ? *files : std::vector<util::DirEntry>{}) {
      if (f.type != util::FileType::kRegular || !f.name.starts_with("extracted_patch_")) continue;
      auto diff = AcrText(env, dir, out + "/" + f.name, &budget);
      auto parsed = util::ParsePatch(diff.ok() ? *diff : "");
      for (const auto& p : parsed.ok() ? *parsed : std::vector<util::FilePatch>{}) {
        col.Edit(util::JoinPath(col.root, p.path()), col.root);
      }
    }
  }
  col.Finish(t);
  uint64_t own = 1u << 20;  // the run's own small files are not the search's to spend
  json selected = AcrJson(env, dir, "selected_patch.json", &own);
  std::string chosen = util::TextOr(selected, "selected_patch");
  bool inside = !chosen.starts_with("/") && chosen.find("..") == std::string::npos;
  auto patch = chosen.empty() || !inside ? util::Expected<std::string>(util::Error{""})
                              : env.ReadUntrusted(dir, chosen, 64u << 20);
  if (patch.ok()) SetPatch(t, *patch);
  t->exit_status = patch.ok() ? "patch selected: " + util::TextOr(selected, "reason") : "no patch";
  own = 1u << 20;
  json cost = AcrJson(env, dir, "cost.json", &own);
  if (cost.is_object() && cost.contains("total_input_tokens")) {
    t->prompt_tokens = Int(cost, "total_input_tokens");
    t->completion_tokens = Int(cost, "total_output_tokens");
    t->cost = Double(cost, "total_cost");
  }
}

}  // namespace

util::Expected<Trajectory> ReadAgentStreamOrThrow(util::Env& env, const std::string& text,
                                                  const std::string& file,
                                                  const std::string& display,
                                                  TrajectoryFormat format);

util::Expected<Trajectory> ReadAgentStream(util::Env& env, const std::string& text,
                                           const std::string& file, const std::string& display,
                                           TrajectoryFormat format) {
  // Agents wrote these files: whatever they hold is a reason to skip this one, never to stop.
  try {
    return ReadAgentStreamOrThrow(env, text, file, display, format);
  } catch (const std::exception& e) {
    return util::Error{display + ": " + e.what()};
  }
}

util::Expected<Trajectory> ReadAgentStreamOrThrow(util::Env& env, const std::string& text,
                                                  const std::string& file,
                                                  const std::string& display,
                                                  TrajectoryFormat format) {
  auto real = env.RealPath(file);
  std::string path = real.ok() ? *real : file;
  auto read = ReadTrajectories(text, path, format);
  if (!read.ok()) return read.failure();
  if (read->size() != 1) return util::Error{display + ": not one trajectory"};
  Trajectory t = std::move(read->front());
  t.source = display;
  if (format == TrajectoryFormat::kAutoCodeRover) {
    AddAutoCodeRoverRun(env, util::DirName(path), &t);
  }
  if (format == TrajectoryFormat::kCodex && !t.api_calls) {
    t.api_calls = CodexSessionCalls(env, util::JoinPath(util::DirName(path), "codex/sessions"));
  }
  return t;
}

std::optional<std::string> InferInstanceOf(util::Env& env, const std::string& file) {
  auto real = env.RealPath(file);
  std::string output = util::DirName(real.ok() ? *real : file);
  if (!IsInferOutputDir(output) || output == kOutputDir) return std::nullopt;
  std::string inst = util::DirName(output);
  auto result = env.Stat(InferInstanceDir{inst}.result(), false);
  if (!result.ok() || result->type != util::FileType::kRegular) return std::nullopt;
  return inst;
}

void AddInferRunContext(util::Env& env, const std::string& file, Trajectory* t) {
  auto inst = InferInstanceOf(env, file);
  if (!inst) {
    if (t->format == TrajectoryFormat::kTraeAgent && t->patch.empty() &&
        file.ends_with(".json")) {
      // Trae's own harness writes <id>.patch beside <id>.json.
      std::string base = file.substr(file.find_last_of('/') + 1);
      auto patch = env.ReadUntrusted(util::DirName(file),
                                     base.substr(0, base.size() - 5) + ".patch", 64u << 20);
      if (patch.ok()) SetPatch(t, *patch);
    }
    return;
  }
  // Read as files the agent could have planted: no links, no FIFOs, bounded. The patch is
  // fbkit's own diff of the workspace, whatever the agent's files name.
  auto patch = env.ReadUntrusted(*inst, kPatchFile, 64u << 20);
  if (patch.ok()) SetPatch(t, *patch);
  auto statement = env.ReadUntrusted(*inst, kStatementFile, 16u << 20);
  if (statement.ok() && t->problem_statement.empty()) t->problem_statement = *statement;
}

void SetPatch(Trajectory* t, std::string patch) {
  t->patch = std::move(patch);
  t->patch_files.clear();
  parts::PatchFiles(t);
}

bool IsAgentCliFormat(TrajectoryFormat format) {
  const auto& readers = AgentCliReaders();
  return std::any_of(readers.begin(), readers.end(), [&](const auto& r) { return r.first == format; });
}

ShellEffects AnalyzeShell(const std::string& command, std::string* cwd) {
  ShellEffects e;
  for (const auto& c : ShellSplitter(command).Split()) Effects(c, cwd, &e);
  return e;
}

std::optional<TrajectoryFormat> DetectFormat(const std::string& text, const std::string& path) {
  using F = TrajectoryFormat;
  json j = util::ParseUntrustedJson(text);
  if (j.is_object()) {
    if (j.contains("llm_interactions") && j.contains("agent_steps")) return F::kTraeAgent;
    if (j.contains("task_info") && j.contains("setup_info")) return F::kAutoCodeRover;
    bool info = j.contains("info") && j["info"].is_object();
    if (info && j.contains("messages") && !j.contains("trajectory") && !j.contains("history")) {
      return F::kMiniSweAgent;
    }
    if ((info && (j.contains("trajectory") || j.contains("history"))) || j.contains("attempts")) {
      return F::kSweAgent;
    }
    if (j.contains("instance_id") && j.contains("history")) return F::kOpenHands;
    return std::nullopt;
  }
  std::string first = text.substr(0, text.find('\n'));
  json line = util::ParseUntrustedJson(first);
  if (line.is_object() && line.contains("instance_id") && line.contains("history"))
    return F::kOpenHands;
  if (line.is_object() && util::TextOr(line, "type") == "system" && util::TextOr(line, "subtype") == "init" &&
      line.contains("claude_code_version")) {
    return F::kClaudeCode;
  }
  if (line.is_object() && util::TextOr(line, "type") == "thread.started" && line.contains("thread_id")) {
    return F::kCodex;
  }
  if (line.is_object() && util::TextOr(line, "type") == "init" && line.contains("session_id") &&
      line.contains("model")) {
    return F::kGeminiCli;
  }
  (void)path;
  return std::nullopt;
}

util::Expected<std::vector<Trajectory>> ReadTrajectories(const std::string& text,
                                                         const std::string& path,
                                                         TrajectoryFormat format) {
  std::vector<Trajectory> out;
  for (const auto& [f, reader] : AgentCliReaders()) {
    if (format != f) continue;
    try {
      out.push_back(reader(text, path));
    } catch (const std::exception& e) {
      std::string what = e.what();
      return util::Error{what.starts_with(path) ? what : path + ": " + what};
    }
    return out;
  }
  if (format == TrajectoryFormat::kOpenHands) {
    size_t start = 0;
    int line = 0;
    while (start < text.size()) {
      size_t eol = text.find('\n', start);
      std::string l =
          text.substr(start, eol == std::string::npos ? std::string::npos : eol - start);
      start = eol == std::string::npos ? text.size() : eol + 1;
      ++line;
      if (l.find_first_not_of(" \t\r") == std::string::npos) continue;
      try {
        json j = util::ParseUntrustedJson(l);
        if (j.is_discarded()) j = json::parse(l);  // not JSON: throws, saying where
        out.push_back(ReadOpenHands(j, path));
      } catch (const std::exception& e) {
        return util::Error{path + ":" + std::to_string(line) + ": " + e.what()};
      }
    }
    return out;
  }
  try {
    json j = util::ParseUntrustedJson(text);
    if (j.is_discarded()) j = json::parse(text);  // not JSON: throws, saying where
    if (format == TrajectoryFormat::kMiniSweAgent) {
      out.push_back(ReadMini(j, path));
    } else {
      out.push_back(ReadSweAgent(j, path));
    }
  } catch (const std::exception& e) {
    return util::Error{path + ": " + e.what()};
  }
  return out;
}

}  // namespace fbkit::agents
