// Copies of a repository's own packages that a sandbox would show outside the trees it works
// on: the answer within reach of an agent, or of a patch's code while it is tested (a vendored
// jinja2 in another package's tree, a Debian python3-<library>, another interpreter's
// site-packages). The sandbox's view is an allow-list; this checks it instead of trusting it.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "sandbox/process.h"
#include "sandbox/sandbox.h"
#include "util/env.h"
#include "util/expected.h"

namespace fbkit::sandbox {

// What a spec says of a copy it finds: refuse to run (the default), hide it (an empty
// directory, or an empty file, in its place), or allow it (seen, reported, run anyway).
enum class CopyPolicy { kRefuse, kHide, kAllow };
util::Expected<CopyPolicy> ParseCopyPolicy(const std::string& name);
const char* CopyPolicyName(CopyPolicy policy);

struct ExposedCopy {
  std::string package;  // "jinja2"
  std::string path;     // the host path the sandbox shows it at (the image's, in_image)
  bool in_image = false;   // a file of a container sandbox's image (FindCopiesInImage)
  bool directory = true;   // a package directory, else a module file or a distribution
};

// Every directory named after one of `packages` that holds Python code (a .py or .pyc file
// directly in it, or a __pycache__), every file `<package>.py` or `.pyc` (or
// `__pycache__/<package>.*.pyc`) where it is importable, and every distribution of one
// (`<Package>-*.whl`, `.egg`, `.zip`, `.pyz`, `.tar.gz`, `.tar.bz2`, `.tgz`; any case, '_' or
// '-'), that `sandbox` shows
// from the host: in the system view (`host`), the read-only and writable paths, binds'
// sources, each as the link it may be resolves. Not below `own` (the work copies and the
// task's own trees) nor a private copy's source or built_dir (the environment's copy of the
// tree it was built from), not hidden or masked ones; /proc, /dev and /sys are not walked, links
// below a root not followed. Sorted by path; at most `limit`. `cut` (when given) names where
// the walk stopped short (deeper than 256 levels, past 2,000,000 directories), "" if nowhere.
std::vector<ExposedCopy> FindCopies(util::Env& env, const Sandbox& sandbox, const HostInfo& host,
                                    const std::set<std::string>& packages,
                                    const std::vector<std::string>& own, size_t limit = 20,
                                    std::string* cut = nullptr);

// The copies of `packages` in a container sandbox's image, by the rule of FindCopies (and a
// package directory the sandbox's user may not list: its files are read by name), as a
// container of the image with nothing mounted shows them: a `find` run in it (no network,
// the sandbox's user) over its files but /proc, /sys, /dev, the paths the sandbox shows empty
// (/tmp, /var/tmp, homes, /srv, /mnt, /media) and the environment's own tree (/fbkit/src).
// Run once per image and packages in a process (cached); its output in `log_dir`.
util::Expected<std::vector<ExposedCopy>> FindCopiesInImage(Launcher& launcher, const Sandbox& sandbox,
                                                           const std::set<std::string>& packages,
                                                           const std::string& log_dir);

// Applies `policy` to what FindCopies finds in `sandbox` (and, for a container sandbox,
// FindCopiesInImage through `launcher` with its log in `log_dir`; an image's copy is hidden
// by an empty directory or file mounted over it): kHide masks each copy (and looks
// again: a copy is never left visible), kAllow returns them to be reported, kRefuse returns
// an error naming each and the spec key that decides. A walk cut short is an error but
// for kAllow (what was not looked at may be a copy). `what` names the run ("the agent of
// task X").
util::Expected<std::vector<ExposedCopy>> GuardCopies(util::Env& env, Sandbox* sandbox,
                                                     const HostInfo& host,
                                                     const std::set<std::string>& packages,
                                                     const std::vector<std::string>& own,
                                                     CopyPolicy policy, const std::string& what,
                                                     Launcher* launcher = nullptr,
                                                     const std::string& log_dir = "");

}  // namespace fbkit::sandbox
