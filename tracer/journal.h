// Reads the agent's JSON-lines journal into a TraceSet, incrementally (the runner feeds it
// while pytest runs, to time each test file) and from several processes (sessions resumed
// after a crash, isolate mode, child processes): edges are merged, never overwritten.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "tracer/trace.h"

namespace fbkit::tracer {

class JournalReader {
 public:
  // With a `key`, only records signed with it in order count (fbkit_core.Journal: a `seq`
  // from 1 and a TAB then the HMAC-SHA256 of the JSON text); any other line is ignored and
  // reported once in TraceSet::integrity.
  explicit JournalReader(TraceSet* trace, std::string key = "") : trace_(trace), key_(std::move(key)) {}

  // Applies every complete line of `data` (appended bytes of one journal); a partial last
  // line is kept for the next call. Malformed lines are counted, not fatal.
  void Feed(std::string_view data);

  // The test file whose tests started last ("begin"), if any.
  const std::optional<std::string>& current_file() const { return current_file_; }
  // The test that started last ("test") and the file it ran in, if any.
  const std::optional<std::pair<std::string, std::string>>& current_test() const { return current_test_; }
  bool finished() const { return finished_; }
  // Test files in collection order, and those whose tests have started.
  const std::vector<std::string>& collected() const { return collected_; }
  const std::set<std::string>& begun() const { return begun_; }
  // Test files with tests left after deselection, in collection order (empty until pytest
  // finished collecting).
  const std::vector<std::string>& selected() const { return selected_; }
  int malformed_lines() const { return malformed_; }
  TraceSet* trace() const { return trace_; }

 private:
  friend struct JournalRecords;  // what each kind of record changes (journal.cc)
  void Apply(std::string_view line);
  std::string pending_;
  TraceSet* trace_;
  std::optional<std::string> current_file_;
  std::optional<std::pair<std::string, std::string>> current_test_;  // (file, nodeid)
  std::vector<std::string> collected_;
  std::set<std::string> begun_;
  std::vector<std::string> selected_;
  bool finished_ = false;
  int after_finish_ = 0;  // records after "finish": ignored, reported in TraceSet::integrity
  bool selection_seen_ = false;  // pytest said which tests it selected ("selected")
  bool overlong_ = false;         // inside a line over the length limit (dropped)
  int unselected_ = 0;    // reports of tests pytest did not select: ignored, reported
  bool checks_ = false;   // the plugin's checks were on at its start ("start")
  std::set<std::string> checked_;  // tests whose call the checks preceded ("checked")
  int unchecked_ = 0;     // call reports without them: reported once
  std::optional<std::string> running_;  // the test pytest started last ("test"), any file
  int elsewhere_ = 0;     // reports (with checks) of another test than it: reported once
  std::string key_;       // "" : records are not signed
  int64_t seq_ = 0;       // the last signed record's number
  int unsigned_ = 0;      // lines not signed in order: ignored, reported
  int malformed_ = 0;
};

}  // namespace fbkit::tracer
