// What a batch command (infer, eval) shows while util::RunBatch runs: a progress line on
// stderr and, unless quiet, one line per finished item: "[k/n] ID: what (earlier run)".
#pragma once

#include <cstdio>
#include <functional>
#include <string>
#include <utility>

#include "cli/cli_common.h"
#include "util/batch.h"

namespace fbkit::cli {

template <typename Result>
class BatchLines {
 public:
  using Id = std::function<std::string(const util::BatchItem<Result>&)>;
  using Describe = std::function<std::string(const Result&)>;
  // `id` and `describe` give an item's name and the rest of its line.
  BatchLines(std::string label, bool quiet, Id id, Describe describe)
      : progress_(std::move(label), !quiet),
        quiet_(quiet),
        id_(std::move(id)),
        describe_(std::move(describe)) {}
  ~BatchLines() { progress_.Clear(); }

  void operator()(const util::BatchItem<Result>& item) {
    progress_.Clear();
    if (!quiet_) {
      std::fprintf(stderr, "[%zu/%zu] %s: %s%s\n", item.done, item.total,
                   id_(item).c_str(), describe_(*item.result).c_str(),
                   item.resumed ? " (earlier run)" : "");
    }
    progress_.Update(item.done, item.total);
  }
  // Clears the progress line (before the command's own output).
  void Done() { progress_.Clear(); }

 private:
  Progress progress_;
  bool quiet_;
  Id id_;
  Describe describe_;
};

}  // namespace fbkit::cli
