// A repository as the extractor sees it: every Python file's entity table (with the names
// each entity uses) and its bytes, indexed by path, dotted module and entity id.
//
// Inside the pipeline an entity has one handle, `Ent`: its position in the entity table
// (files in order, each file's entities in source order, the module first). The dependency
// graph built from the same table numbers its vertices the same way (CheckGraph says when a
// graph was built from another table), so an `Ent` is also the entity's vertex. String ids
// are resolved to it once, where they enter the pipeline (Find), and written back where
// they leave it (id).
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "graph/dep_graph.h"
#include "parser/entity.h"
#include "util/env.h"
#include "util/expected.h"

namespace fbkit::extract::make {

using Ent = uint32_t;

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
  // True when `module`.`name` is itself a module (a submodule of a package).
  bool IsModule(const std::string& module, const std::string& name) const;

  // -- entities by handle ---------------------------------------------------------------
  size_t size() const { return file_of_.size(); }
  std::optional<Ent> Find(std::string_view id) const;
  const parser::Entity& entity(Ent e) const {
    return files_[file_of_[e]].entities[e - first_[file_of_[e]]];
  }
  const std::string& id(Ent e) const { return entity(e).id; }
  size_t file(Ent e) const { return file_of_[e]; }
  const parser::FileTable& table(Ent e) const { return files_[file_of_[e]]; }
  Ent module(size_t file) const { return first_[file]; }
  // The entity that contains `e`; none for a module.
  std::optional<Ent> Parent(Ent e) const { return parent_[e]; }
  // A module-level function or class (or other definition directly in its module).
  bool IsTopLevel(Ent e) const;
  // The entities of one file, module first: [module(file), module(file) + count).
  std::vector<Ent> EntitiesOf(size_t file) const;
  // The entities directly inside `e` (a class's members, a function's nested defs).
  std::vector<Ent> Children(Ent e) const;
  // Whether `e` is nested in `outer`, at any depth (not `outer` itself).
  bool Within(Ent e, Ent outer) const;
  // Every entity nested in `e`, at any depth, in table order.
  std::vector<Ent> Descendants(Ent e) const;

  // `ents` in the order of their ids (where the order shows in what the pipeline writes).
  std::vector<Ent> ByIdOrder(const std::set<Ent>& ents) const;
  // The ids of `ents`, sorted (where handles leave the pipeline).
  std::vector<std::string> Ids(const std::set<Ent>& ents) const;
  std::set<std::string> IdSet(const std::set<Ent>& ents) const;
  // The handles of `ids`; ids not in the table are left out.
  std::set<Ent> Resolve(const std::set<std::string>& ids) const;

  // Whether `g` was built from this entity table (its vertices are this table's entities,
  // in order); the error names the first difference.
  util::Status CheckGraph(const graph::DepGraph& g) const;

 private:
  std::string root_;
  std::vector<parser::FileTable> files_;
  std::vector<std::string> sources_;
  std::vector<size_t> file_of_;  // Ent -> file
  std::vector<Ent> first_;       // file -> its module's Ent
  std::vector<std::optional<Ent>> parent_;  // Ent -> the entity containing it
  std::unordered_map<std::string, size_t> by_path_;
  std::unordered_map<std::string, size_t> by_module_;
  std::unordered_map<std::string, Ent> by_id_;
};

// The name an import binds: the alias, the imported name, or a dotted module's first part.
std::string BoundName(const parser::Import& imp, const parser::ImportName& n);

// The first component of a dotted reference ("os" for "os.path.join").
std::string_view Head(std::string_view dotted);

}  // namespace fbkit::extract::make
