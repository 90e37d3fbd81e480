#include "tracer/journal.h"

#include <nlohmann/json.hpp>
#include <optional>

#include "util/hash.h"
#include "util/json_read.h"

namespace fbkit::tracer {
namespace {

using nlohmann::json;

FileTrace& File(TraceSet* trace, const std::string& file) {
  FileTrace& f = trace->files[file];
  f.file = file;
  return f;
}

void ApplyEdges(TraceSet* trace, const json& rec) {
  std::vector<CodeId> codes;
  for (const auto& c : rec.at("codes")) {
    codes.push_back(CodeId{c.at(0).get<std::string>(), c.at(1).get<int>(), c.at(2).get<std::string>()});
  }
  std::string context = rec.at("context").get<std::string>();
  static const std::string kCollect = "<collect>";
  bool is_file = !context.empty() && context[0] != '<';
  EdgeCounts& edges = is_file ? File(trace, context).edges
                      : context.starts_with(kCollect)
                          ? File(trace, context.substr(kCollect.size())).collect_edges
                          : trace->contexts[context];
  for (const auto& e : rec.at("edges")) {
    int caller = e.at(0).get<int>();
    std::optional<CodeId> from;
    if (caller >= 0) from = codes.at(static_cast<size_t>(caller));
    edges[{from, codes.at(e.at(1).get<size_t>())}] += e.at(2).get<int64_t>();
  }
  // Observed types: kept for the tests' own context (what a test file's tests ran).
  if (!is_file || !rec.contains("types")) return;
  TypeMap types;
  for (const auto& t : rec.at("types")) {
    ObservedTypes& o = types[codes.at(t.at(0).get<size_t>())];
    for (const auto& [name, names] : t.at(1).items()) {
      for (const auto& n : names) o.params[name].insert(n.get<std::string>());
    }
    for (const auto& n : t.at(2)) o.returns.insert(n.get<std::string>());
  }
  AddTypes(types, &File(trace, context).types);
}

// Whether a report's category (what pytest_report_teststatus made of it) overturns pytest's
// own outcome instead of refining it: a failed report is failed or error; a passed one
// passed, xpassed or nothing (a setup or teardown); a skipped one skipped or xfailed. Other
// outcomes (a plugin's own, as "rerun") are not judged.
bool Overturns(const std::string& outcome, const std::string& category) {
  if (outcome == "failed") return category != "failed" && category != "error";
  if (outcome == "passed") {
    return category != "passed" && category != "xpassed" && !category.empty();
  }
  if (outcome == "skipped") return category != "skipped" && category != "xfailed";
  return false;
}

// `file`: the test's file (the record's own, or the one pytest selected it in).
void ApplyReport(TraceSet* trace, const json& rec, const std::optional<std::string>& file) {
  std::string category = rec.at("category").get<std::string>();
  std::string nodeid = rec.at("nodeid").get<std::string>();
  std::string outcome = rec.value("outcome", "");
  if (rec.contains("outcome") && rec.at("outcome").is_string() && Overturns(outcome, category)) {
    trace->integrity.push_back("the report of the " + rec.at("when").get<std::string>() +
                               " phase of " + nodeid + " says " + category + " but pytest's " +
                               "outcome is " + outcome + " (its status was rewritten)");
    category = outcome;
  }
  if (!category.empty()) trace->counts[category]++;
  if (!file) return;
  FileTrace& f = File(trace, *file);
  runner::TestResult& t = f.tests[nodeid];
  t.nodeid = nodeid;
  std::string when = rec.at("when").get<std::string>();
  if (t.phases.count(when)) {
    trace->integrity.push_back("two reports of the " + when + " phase of " + nodeid +
                               " (a report written by the tested code?)");
  }
  t.phases[when] = category;
  t.duration += rec.value("duration", 0.0);
  if (!t.message && rec.contains("message") && rec.at("message").is_string()) {
    t.message = rec.at("message").get<std::string>();
  }
  t.outcome = runner::CombineOutcome(t.phases);
}

}  // namespace

// Longer than any record fbkit's agent writes (a file's edges included).
constexpr size_t kMaxLineBytes = 64u << 20;

void JournalReader::Feed(std::string_view data) {
  pending_.append(data);
  size_t start = 0;
  for (size_t nl = pending_.find('\n'); nl != std::string::npos; nl = pending_.find('\n', start)) {
    if (overlong_) {
      overlong_ = false;  // the end of a line already counted as malformed
    } else {
      Apply(std::string_view(pending_).substr(start, nl - start));
    }
    start = nl + 1;
  }
  pending_.erase(0, start);
  if (pending_.size() > kMaxLineBytes) {
    // A line longer than any record: malformed, and not kept while it goes on.
    if (!overlong_) ++malformed_;
    overlong_ = true;
    pending_.clear();
  }
}

// What each kind of record changes in a JournalReader and its trace.
struct JournalRecords {
  static void Collect(JournalReader& r, const json& rec) {
    std::string file = rec.at("file").get<std::string>();
    FileTrace& f = File(r.trace_, file);
    if (std::find(r.collected_.begin(), r.collected_.end(), file) == r.collected_.end()) {
      r.collected_.push_back(file);
    }
    if (rec.at("error").is_string()) {
      f.status = runner::FileStatus::kCollectError;
      f.error = rec.at("error").get<std::string>();
      r.trace_->counts["error"]++;
    }
  }

  static void Selected(JournalReader& r, const json& rec) {
    if (r.selection_seen_) {
      // pytest selects once per session: another selection was written by the tested code.
      r.trace_->integrity.push_back("a second selection of tests in one session's journal "
                                    "(written by the tested code?)");
      return;
    }
    r.selection_seen_ = true;
    for (const auto& entry : rec.at("files")) {
      std::string file = entry.at(0).get<std::string>();
      r.selected_.push_back(file);
      File(r.trace_, file).nodeids = entry.at(1).get<std::vector<std::string>>();
    }
  }

  // pytest runs tests only once it has said which it selected: a report before that, or of
  // a test it did not select (a file that failed to collect has none), was not written by
  // pytest's run of it.
  static void Report(JournalReader& r, const json& rec) {
    std::string nodeid = rec.at("nodeid").get<std::string>();
    // With checks, the plugin says it checked each test before its call: a call reported
    // without that ran after the tested code turned the plugin's checks off.
    if (r.checks_ && rec.value("when", "") == "call" && !r.checked_.count(nodeid) &&
        r.unchecked_++ == 0) {
      r.trace_->integrity.push_back("the grader's checks did not run before the call of " +
                                    nodeid + " (the tested code turned them off?)");
    }
    // pytest reports a test only inside its own protocol, which starts with its "test"
    // record: a report of another test was made outside pytest's order.
    if (r.checks_ && r.running_ && *r.running_ != nodeid && r.elsewhere_++ == 0) {
      r.trace_->integrity.push_back("a report of " + nodeid + " while pytest ran " + *r.running_ +
                                    " (written by the tested code?)");
    }
    bool known = false;
    std::optional<std::string> file;
    if (r.selection_seen_ && rec.at("file").is_string()) {
      file = rec.at("file").get<std::string>();
      const auto& ids = File(r.trace_, *file).nodeids;
      known = std::find(ids.begin(), ids.end(), nodeid) != ids.end();
    } else if (r.selection_seen_) {
      // No file: a test outside the repository, which only counts; unless pytest selected it
      // in one of the repository's files (the tested code unset which file it belongs to).
      for (const auto& selected : r.selected_) {
        const auto& ids = File(r.trace_, selected).nodeids;
        if (std::find(ids.begin(), ids.end(), nodeid) == ids.end()) continue;
        r.trace_->integrity.push_back("a report of " + nodeid + " without its file " + selected +
                                      " (the tested code unset it?)");
        file = selected;
        break;
      }
      known = true;
    }
    if (known) {
      ApplyReport(r.trace_, rec, file);
    } else if (r.unselected_++ == 0) {
      r.trace_->integrity.push_back("a report of " + nodeid +
                                    ", a test pytest had not selected (written by the tested code?)");
    }
  }

  static void Apply(JournalReader& r, const json& rec, const std::string& type) {
    TraceSet* trace = r.trace_;
    if (type == "integrity") {
      trace->integrity.push_back(rec.at("message").get<std::string>());
    } else if (type == "note") {
      trace->notes.push_back(rec.at("message").get<std::string>());
    } else if (type == "start") {
      trace->python = rec.value("python", "");
      trace->accelerated = rec.value("accelerated", false);
      for (const auto& p : rec.at("preloaded")) trace->preloaded.insert(p.get<std::string>());
      r.checks_ = rec.value("checks", false);
    } else if (type == "checked") {
      r.checked_.insert(rec.at("nodeid").get<std::string>());
    } else if (type == "collect") {
      Collect(r, rec);
    } else if (type == "selected") {
      Selected(r, rec);
    } else if (type == "begin") {
      r.current_file_ = rec.at("file").get<std::string>();
      r.begun_.insert(*r.current_file_);
    } else if (type == "test") {
      r.running_ = rec.at("nodeid").get<std::string>();
      if (r.current_file_) r.current_test_ = {*r.current_file_, rec.at("nodeid").get<std::string>()};
    } else if (type == "report") {
      Report(r, rec);
    } else if (type == "edges") {
      ApplyEdges(trace, rec);
    } else if (type == "uses") {
      File(trace, rec.at("file").get<std::string>())
          .fixture_contexts.insert(rec.at("context").get<std::string>());
    } else if (type == "warning") {
      trace->warnings.push_back(
          TraceWarning{rec.at("nodeid").get<std::string>(), rec.at("message").get<std::string>()});
    } else if (type == "hooks") {
      for (const auto& h : rec.at("hooks")) {
        trace->hooks.insert({h.at(0).get<std::string>(), h.at(1).get<std::string>()});
      }
    } else if (type == "finish") {
      trace->exitstatus = rec.at("exitstatus").get<int>();
      r.finished_ = true;
    }
  }
};

void JournalReader::Apply(std::string_view line) {
  if (line.empty()) return;
  // With a key: signed by fbkit's writer and numbered in order, else written by the tested
  // code on the journal's descriptor (ignored, the first reported).
  auto refuse = [&]() {
    if (unsigned_++ == 0) {
      trace_->integrity.push_back("a journal record fbkit's plugin did not write, or not in "
                                  "its order (first: " + std::string(line.substr(0, 200)) + ")");
    }
  };
  std::string_view body = line;
  if (!key_.empty()) {
    size_t tab = line.rfind('\t');
    if (tab == std::string_view::npos || util::HmacSha256Hex(key_, line.substr(0, tab)) != line.substr(tab + 1)) {
      return refuse();
    }
    body = line.substr(0, tab);
  }
  try {
    // The tested process holds the journal's descriptor too: a line is parsed within
    // bounds (nesting, values) and a longer line than any record fbkit writes is malformed.
    if (body.size() > kMaxLineBytes) throw json::other_error::create(501, "line too long", nullptr);
    json rec = util::ParseUntrustedJson(body, 64, SIZE_MAX);
    if (rec.is_discarded()) throw json::other_error::create(501, "not JSON", nullptr);
    if (!key_.empty()) {
      if (!rec.contains("seq") || !rec["seq"].is_number_integer() || rec["seq"].get<int64_t>() != seq_ + 1) {
        return refuse();
      }
      ++seq_;
    }
    std::string type = rec.at("type").get<std::string>();
    if (finished_) {
      // The agent writes nothing after "finish": this came from the tested process's own
      // code (an atexit handler, a thread), and it does not count.
      if (after_finish_++ == 0) {
        trace_->integrity.push_back("the journal has records written after pytest finished "
                                    "(first: " + std::string(line.substr(0, 200)) + ")");
      }
      return;
    }
    JournalRecords::Apply(*this, rec, type);
  } catch (const std::exception&) {  // a field of the wrong type, an index out of range
    ++malformed_;
  }
}

}  // namespace fbkit::tracer
