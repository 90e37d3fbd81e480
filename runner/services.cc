#include "runner/services.h"

namespace fbkit::runner {

std::unique_ptr<Git> MakeGit(const Services& services, const std::string& scratch) {
  if (services.git != nullptr) return (*services.git)(scratch);
  return std::make_unique<GitProgram>(services.env, services.launcher, scratch);
}

}  // namespace fbkit::runner
