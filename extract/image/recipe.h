// Container recipes for task directories (fbkit.images/1), owned here in both directions:
// for each task an environment recipe (the base image, the spec's interpreter and install
// steps run as fbkit runs them: in a copy of the pre-solved tree, /fbkit/src, with $FBKIT_ENV,
// $FBKIT_SRC and $PYTHON set) and an agent-facing task recipe FROM it (L1: the pre-solved tree
// at /testbed as its one commit, the same commit id as presolved/; L2: an empty project and
// no tree of the repository in any layer). A recipe is a build context with its Dockerfile;
// its tag is the hash of its bytes, so equal recipes are one image. Nothing of the answer
// (the gold patch, the F2P file, the original's history) is written into a recipe.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "extract/taskdir/task_dir.h"
#include "sandbox/process.h"
#include "sandbox/sandbox.h"
#include "util/env.h"
#include "util/expected.h"

namespace fbkit::extract::image {

// Where every image starts when the user names none: Debian 12 with the packages fbkit's
// specs assume of the system (python3, venv, pytest, git, patch), from Debian's registry.
inline constexpr char kDebianBase[] = "debian:bookworm-slim";

// The directory names of a recipe tree (OUT/base, OUT/env/HASH, OUT/task/ID) and the paths
// inside an image (the test runner /fbkit/pytest.sh, the tree /testbed).
using sandbox::kImageTestbed;
inline constexpr char kImagePytest[] = "/fbkit/pytest.sh";
inline constexpr char kFeatureBenchBin[] = "/fbkit/featurebench-env/bin";  // its `conda activate` PATH
using sandbox::kImagePython;  // the tests' interpreter (sandbox/sandbox.h: the container sandbox's)

struct Recipe {
  std::string dir;       // the build context, holding its Dockerfile
  std::string tag;       // NAME:HASH (hash: of the context's bytes)
  bool network = false;  // its RUN steps reach the network (the spec's install network)
};

struct RecipeOptions {
  std::string out_dir;   // recipes go to OUT/base, OUT/env/HASH, OUT/task/INSTANCE_ID
  std::string base;      // the base image ("": fbkit's base recipe from kDebianBase)
  std::string prefix = "fbkit";  // image names: PREFIX/env-REPO, PREFIX/task-INSTANCE_ID
  std::string work_dir;  // scratch (removed afterwards)
  // Also FeatureBench's layout for its harness (`fb eval`): the original at /testbed and
  // /root/my_repo (an L2 task: its L1 sibling's image). A grading image: it holds the answer,
  // never an agent's.
  bool featurebench = false;
};

struct TaskRecipes {
  std::string instance_id;
  int level = 1;
  Recipe environment;  // its tests' environment: graders run the tests FROM it
  Recipe task;         // the image an agent works in
  Recipe featurebench; // FeatureBench's grading image (RecipeOptions::featurebench; tag "" when none)
};

// fbkit's base recipe (OUT/base), which the others start FROM when options.base is "".
util::Expected<Recipe> WriteBaseRecipe(util::Env& env, const RecipeOptions& options);

// The recipes of the task in `task_dir` (an L2 task reads its L1 sibling's presolved/).
// `from` is the base image's tag (options.base, or WriteBaseRecipe's). Git reads the task
// directory confined (it is no more trusted than its code).
util::Expected<TaskRecipes> WriteTaskRecipes(util::Env& env, sandbox::Launcher& launcher,
                                             const std::string& task_dir, const std::string& from,
                                             const RecipeOptions& options);

// One build context whose Dockerfile makes the task's agent image by itself (fbkit's base
// steps when `base` is "", the environment's, the task's), for formats that build from one
// context (Harbor's environment/), written to `dir`. An L2 task's image holds nothing of the
// repository: its grader builds the environment at verification, from `verifier_files`
// (copied to /tests) with `verifier_script` (shell lines that end with /fbkit/python and
// /fbkit/pytest.sh in place and the tree at /fbkit/src).
struct OneContext {
  std::string dir;
  bool network = false;  // the build reaches the network (the spec's install network)
  taskdir::Instance instance;
  std::map<std::string, std::string> verifier_files;
  std::string verifier_script;
};
util::Expected<OneContext> WriteOneContext(util::Env& env, sandbox::Launcher& launcher,
                                           const std::string& task_dir, const std::string& base,
                                           const std::string& dir, const std::string& work_dir);

// The lines of the shell script that runs the task's tests in an image, from /testbed or
// another tree (its working directory): the spec's pythonpath, env and pytest arguments, and
// `-rfEsxXp` so that every test's outcome is printed ("PASSED tests/test_x.py::test_y"); not
// `-rA`, whose passed-with-output section makes pytest's summary quadratic in the tests' count.
std::string PytestScript(const std::string& spec_json);

// The shell that copies what the install steps built in /fbkit/src (listed in
// /fbkit/built-files.txt) into the tree at `tree`, as fbkit gives every copy the tests run in.
std::string CopyBuiltCommand(const std::string& tree);

// `name` made a valid image name component: lower case, [a-z0-9._-], no leading separator.
std::string ImageNamePart(const std::string& name);

}  // namespace fbkit::extract::image
