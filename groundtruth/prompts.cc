#include "groundtruth/prompts.h"

#include <string_view>

namespace fbkit::groundtruth {

const std::vector<util::EmbeddedFile>& StepPrompts() {
  static const std::vector<util::EmbeddedFile> prompts = [] {
    std::vector<util::EmbeddedFile> out;
    for (const auto& f : PromptFiles()) {
      if (f.name == "match.md") {
        out.push_back({"match_steps.md", f.content});
        out.push_back({"match_tasks.md", f.content});
      } else {
        out.push_back(f);
      }
    }
    return out;
  }();
  return prompts;
}

}  // namespace fbkit::groundtruth
