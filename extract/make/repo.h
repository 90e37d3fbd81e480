// A repository as the extractor sees it: every Python file's entity table (with the names
// each entity uses) and its bytes, indexed by path, dotted module and entity id.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "parser/entity.h"
#include "util/env.h"
#include "util/expected.h"

namespace fbkit::extract::make {

struct EntityRef {
  size_t file = 0;
  size_t entity = 0;
};

class Repo {
 public:
  // Reads the sources of `tables` (root-relative paths) from `root`.
  static util::Expected<Repo> Load(util::Env& env, const std::string& root,
                                   std::vector<parser::FileTable> tables);

  const std::string& root() const { return root_; }
  const std::vector<parser::FileTable>& files() const { return files_; }
  const std::string& source(size_t file) const { return sources_[file]; }
  std::optional<size_t> FileOf(std::string_view path) const;
  std::optional<size_t> ModuleFile(std::string_view module) const;
  std::optional<EntityRef> Find(std::string_view id) const;
  const parser::Entity& entity(EntityRef r) const { return files_[r.file].entities[r.entity]; }
  // True when `module`.`name` is itself a module (a submodule of a package).
  bool IsModule(const std::string& module, const std::string& name) const;

 private:
  std::string root_;
  std::vector<parser::FileTable> files_;
  std::vector<std::string> sources_;
  std::unordered_map<std::string, size_t> by_path_;
  std::unordered_map<std::string, size_t> by_module_;
  std::unordered_map<std::string, EntityRef> by_id_;
};

// The name an import binds: the alias, the imported name, or a dotted module's first part.
std::string BoundName(const parser::Import& imp, const parser::ImportName& n);

// The first component of a dotted reference ("os" for "os.path.join").
std::string_view Head(std::string_view dotted);

}  // namespace fbkit::extract::make
