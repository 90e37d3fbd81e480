#include "extract/make/repo.h"

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
    if (!text.ok()) return util::Error{text.error()};
    repo.sources_.push_back(std::move(*text));
    repo.by_path_[t.path] = f;
    repo.by_module_.emplace(t.module, f);
    for (size_t e = 0; e < t.entities.size(); ++e) repo.by_id_[t.entities[e].id] = {f, e};
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

std::optional<EntityRef> Repo::Find(std::string_view id) const {
  auto it = by_id_.find(std::string(id));
  if (it == by_id_.end()) return std::nullopt;
  return it->second;
}

bool Repo::IsModule(const std::string& module, const std::string& name) const {
  return by_module_.count(module.empty() ? name : module + "." + name) > 0;
}

std::string BoundName(const parser::Import& imp, const parser::ImportName& n) {
  if (n.alias) return *n.alias;
  if (imp.is_from) return n.name;
  return std::string(Head(n.name));
}

std::string_view Head(std::string_view dotted) { return dotted.substr(0, dotted.find('.')); }

}  // namespace fbkit::extract::make
