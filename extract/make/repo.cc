#include "extract/make/repo.h"

#include <algorithm>

#include "util/env.h"

namespace fbkit::extract::make {

util::Expected<Repo> Repo::Load(util::Env& env, const std::string& root,
                                std::vector<parser::FileTable> tables) {
  Repo repo;
  repo.root_ = root;
  repo.files_ = std::move(tables);
  repo.sources_.reserve(repo.files_.size());
  for (size_t f = 0; f < repo.files_.size(); ++f) {
    const parser::FileTable& t = repo.files_[f];
    auto text = env.ReadFile(util::JoinPath(root, t.path));
    if (!text.ok()) return text.failure();
    repo.sources_.push_back(std::move(*text));
    repo.by_path_[t.path] = f;
    repo.by_module_.emplace(t.module, f);
    repo.first_.push_back(static_cast<Ent>(repo.file_of_.size()));
    for (const auto& e : t.entities) {
      repo.by_id_[e.id] = static_cast<Ent>(repo.file_of_.size());
      repo.file_of_.push_back(f);
    }
  }
  // The parser names an entity's parent by its id: resolved once, here.
  repo.parent_.resize(repo.size());
  for (Ent e = 0; e < repo.size(); ++e) {
    const parser::Entity& x = repo.entity(e);
    if (x.kind != parser::EntityKind::kModule) repo.parent_[e] = repo.Find(x.parent);
  }
  return repo;
}

std::optional<size_t> Repo::FileOf(std::string_view path) const {
  auto it = by_path_.find(std::string(path));
  if (it == by_path_.end()) return std::nullopt;
  return it->second;
}

std::optional<size_t> Repo::ModuleFile(std::string_view module) const {
  auto it = by_module_.find(std::string(module));
  if (it == by_module_.end()) return std::nullopt;
  return it->second;
}

bool Repo::IsModule(const std::string& module, const std::string& name) const {
  return by_module_.count(module.empty() ? name : module + "." + name) > 0;
}

std::optional<Ent> Repo::Find(std::string_view id) const {
  auto it = by_id_.find(std::string(id));
  if (it == by_id_.end()) return std::nullopt;
  return it->second;
}

bool Repo::IsTopLevel(Ent e) const {
  return entity(e).kind != parser::EntityKind::kModule && entity(e).parent == id(module(file(e)));
}

std::vector<Ent> Repo::EntitiesOf(size_t file) const {
  std::vector<Ent> out(files_[file].entities.size());
  for (size_t i = 0; i < out.size(); ++i) out[i] = first_[file] + static_cast<Ent>(i);
  return out;
}

std::vector<Ent> Repo::Children(Ent e) const {
  std::vector<Ent> out;
  for (Ent m : EntitiesOf(file(e))) {
    if (m != e && entity(m).parent == id(e)) out.push_back(m);
  }
  return out;
}

bool Repo::Within(Ent e, Ent outer) const {
  for (auto p = Parent(e); p; p = Parent(*p)) {
    if (*p == outer) return true;
  }
  return false;
}

std::vector<Ent> Repo::Descendants(Ent e) const {
  std::vector<Ent> out;
  for (Ent m : EntitiesOf(file(e))) {
    if (Within(m, e)) out.push_back(m);
  }
  return out;
}

std::vector<Ent> Repo::ByIdOrder(const std::set<Ent>& ents) const {
  std::vector<Ent> out(ents.begin(), ents.end());
  std::sort(out.begin(), out.end(), [&](Ent a, Ent b) { return id(a) < id(b); });
  return out;
}

std::vector<std::string> Repo::Ids(const std::set<Ent>& ents) const {
  std::vector<std::string> out;
  out.reserve(ents.size());
  for (Ent e : ents) out.push_back(id(e));
  std::sort(out.begin(), out.end());
  return out;
}

std::set<std::string> Repo::IdSet(const std::set<Ent>& ents) const {
  std::set<std::string> out;
  for (Ent e : ents) out.insert(id(e));
  return out;
}

std::set<Ent> Repo::Resolve(const std::set<std::string>& ids) const {
  std::set<Ent> out;
  for (const auto& i : ids) {
    if (auto e = Find(i)) out.insert(*e);
  }
  return out;
}

util::Status Repo::CheckGraph(const graph::DepGraph& g) const {
  const auto& nodes = g.nodes();
  for (size_t v = 0; v < std::min(nodes.size(), size()); ++v) {
    if (nodes[v].id != id(static_cast<Ent>(v))) {
      return util::Error{"the graph was built from another entity table: its vertex " +
                         std::to_string(v) + " is " + nodes[v].id + ", the repository's entity " +
                         id(static_cast<Ent>(v)) +
                         " (rebuild it with fb-graph build on this checkout, with the same "
                         "excludes)"};
    }
  }
  if (nodes.size() != size()) {
    return util::Error{"the graph was built from another entity table: " +
                       std::to_string(nodes.size()) + " vertices for " + std::to_string(size()) +
                       " entities (rebuild it with fb-graph build on this checkout, with the "
                       "same excludes)"};
  }
  return util::Status::Ok();
}

std::string BoundName(const parser::Import& imp, const parser::ImportName& n) {
  if (n.alias) return *n.alias;
  if (imp.is_from) return n.name;
  return std::string(Head(n.name));
}

std::string_view Head(std::string_view dotted) { return dotted.substr(0, dotted.find('.')); }

}  // namespace fbkit::extract::make
