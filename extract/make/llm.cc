#include "extract/make/llm.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "model/model.h"
#include "util/json_writer.h"

namespace fbkit::extract::make {

namespace {

std::string SourceOf(const Repo& repo, Ent v) {
  const auto& e = repo.entity(v);
  return repo.source(repo.file(v))
      .substr(static_cast<size_t>(e.start_byte), static_cast<size_t>(e.end_byte - e.start_byte));
}

std::string Request(const Repo& repo, const std::string& f2p,
                    const std::vector<TopCandidate>& cands, const std::vector<TopItem>& items) {
  std::map<Ent, const TopItem*> item_of;
  for (const auto& it : items) item_of[it.entity] = &it;
  std::string out;
  util::JsonWriter w(&out);
  w.BeginObject();
  w.Key("candidates"), w.BeginArray();
  for (const auto& c : cands) {
    w.BeginObject();
    w.Key("calls"), w.Int(c.calls);
    w.Key("depth"), w.Int(c.depth);
    if (auto it = item_of.find(c.entity); it != item_of.end()) {
      w.Key("facts"), WriteTopFacts(*it->second, w);
    }
    w.Key("id"), w.String(repo.id(c.entity));
    if (repo.entity(c.entity).kind == parser::EntityKind::kClass) {
      w.Key("member_facts"), w.BeginObject();
      std::vector<Ent> by_id = c.members;
      std::sort(by_id.begin(), by_id.end(), [&](Ent a, Ent b) { return repo.id(a) < repo.id(b); });
      for (Ent m : by_id) {
        if (auto it = item_of.find(m); it != item_of.end()) {
          w.Key(repo.id(m)), WriteTopFacts(*it->second, w);
        }
      }
      w.EndObject();
      w.Key("members"), w.BeginArray();
      for (Ent m : c.members) w.String(repo.id(m));
      w.EndArray();
    }
    w.Key("source"), w.String(SourceOf(repo, c.entity));
    w.Key("spread"), w.Int(static_cast<int64_t>(c.spread));
    w.EndObject();
  }
  w.EndArray();
  w.Key("schema"), w.String("fbkit.llm-top/1");
  w.Key("task"), w.String("classify_top_objects");
  w.Key("test_file"), w.String(f2p);
  auto tf = repo.FileOf(f2p);
  w.Key("test_source"), w.String(tf ? repo.source(*tf) : "");
  w.EndObject();
  return out + "\n";
}

// The candidate, or the member of a class candidate, whose id is `id`.
std::optional<Ent> Named(const Repo& repo, const std::vector<TopCandidate>& cands,
                         const std::string& id) {
  for (const auto& c : cands) {
    if (repo.id(c.entity) == id) return c.entity;
    for (Ent m : c.members) {
      if (repo.id(m) == id) return m;
    }
  }
  return std::nullopt;
}

// The candidates (or members) the answer names (their ids resolved here, where they come in).
util::Expected<std::vector<Ent>> Answer(const Repo& repo, const std::string& text,
                                        const std::vector<TopCandidate>& cands) {
  try {
    nlohmann::json j = nlohmann::json::parse(text);
    if (j.is_object()) j = j.at("top_objects");
    std::vector<Ent> chosen;
    for (const auto& x : j) {
      std::string id = x.get<std::string>();
      auto v = Named(repo, cands, id);
      if (!v) return util::Error{"answer names '" + id + "', which is no candidate"};
      if (std::find(chosen.begin(), chosen.end(), *v) == chosen.end()) chosen.push_back(*v);
    }
    if (chosen.empty()) return util::Error{"answer names no top-level object"};
    return chosen;
  } catch (const nlohmann::json::exception& e) {
    return util::Error{std::string("answer is not the expected JSON: ") + e.what()};
  }
}

void Signatures(util::JsonWriter& w, const Repo& repo, const std::vector<Ent>& refs) {
  w.BeginArray();
  for (const auto& r : refs) {
    const auto& e = repo.entity(r);
    w.BeginObject();
    w.Key("id"), w.String(e.id);
    w.Key("signature"), w.String(e.name + e.signature);
    w.EndObject();
  }
  w.EndArray();
}

// Entities whose code names `e` (its name, or a dotted use ending in it); at most 8.
std::vector<Ent> Callers(const Repo& repo, Ent v) {
  const auto& e = repo.entity(v);
  std::vector<Ent> out;
  for (Ent cv = 0; cv < repo.size() && out.size() < 8; ++cv) {
    const auto& c = repo.entity(cv);
    if (cv == v || c.kind == parser::EntityKind::kModule) continue;
    bool names = std::any_of(c.references.begin(), c.references.end(), [&](const auto& r) {
      return r == e.name || r.ends_with("." + e.name);
    });
    if (names) out.push_back(cv);
  }
  return out;
}

// What `e` uses of its own module; at most 8.
std::vector<Ent> Callees(const Repo& repo, Ent v) {
  const auto& e = repo.entity(v);
  const std::string& path = repo.table(v).path;
  std::vector<Ent> out;
  for (const auto& ref : e.references) {
    if (out.size() >= 8) break;
    // A name the module defines: resolved by the id it would have.
    auto found = repo.Find(path + "::" + std::string(Head(ref)));
    if (found && *found != v) out.push_back(*found);
  }
  return out;
}

std::string DocstringRequest(const Repo& repo, const std::string& repo_name, Ent r) {
  const auto& e = repo.entity(r);
  std::string out;
  util::JsonWriter w(&out);
  w.BeginObject();
  w.Key("callees"), Signatures(w, repo, Callees(repo, r));
  w.Key("callers"), Signatures(w, repo, Callers(repo, r));
  w.Key("id"), w.String(e.id);
  w.Key("kind"), w.String(parser::EntityKindName(e.kind));
  w.Key("name"), w.String(e.name);
  w.Key("repo"), w.String(repo_name);
  w.Key("schema"), w.String("fbkit.llm-docstring/1");
  w.Key("signature"), w.String(e.signature);
  w.Key("source"), w.String(SourceOf(repo, r));
  w.Key("task"), w.String("docstring");
  w.EndObject();
  return out + "\n";
}

// The string `key` of a JSON object answer.
// The answer's string `key`, non-blank and at most `max` bytes.
util::Expected<std::string> AnswerText(const std::string& text, const char* key, size_t max) {
  try {
    nlohmann::json j = nlohmann::json::parse(text);
    if (!j.is_object() || !j.contains(key) || !j.at(key).is_string()) {
      return util::Error{std::string("answer has no string \"") + key + "\""};
    }
    std::string s = j.at(key).get<std::string>();
    if (s.find_first_not_of(" \t\r\n") == std::string::npos) {
      return util::Error{std::string("answer's \"") + key + "\" is empty"};
    }
    if (s.size() > max) {
      return util::Error{std::string("answer's \"") + key + "\" is over " +
                         std::to_string(max / 1024) + " KiB"};
    }
    return s;
  } catch (const nlohmann::json::exception& e) {
    return util::Error{std::string("answer is not the expected JSON: ") + e.what()};
  }
}

}  // namespace

StatementModel LlmStatementModel(model::Model& model, const Repo& repo,
                                 std::string repo_name) {
  StatementModel m;
  m.docstring = [&model, &repo, repo_name](Ent r) -> util::Expected<std::string> {
    std::function<util::Expected<std::string>(const std::string&)> read =
        [](const std::string& a) { return AnswerText(a, "docstring", 16u << 10); };
    auto doc = model::AskFor(model, DocstringRequest(repo, repo_name, r), read);
    if (!doc.ok()) return util::Error{"docstring of " + repo.entity(r).id + ": " + doc.error()};
    return doc->value_or("");  // blank: the description from the code
  };
  m.task_statement = [&model, repo_name](const std::string& interfaces,
                                         int level) -> util::Expected<std::string> {
    std::string req;
    util::JsonWriter w(&req);
    w.BeginObject();
    w.Key("interfaces"), w.String(interfaces);
    w.Key("level"), w.Int(level);
    w.Key("repo"), w.String(repo_name);
    w.Key("schema"), w.String("fbkit.llm-statement/1");
    w.Key("task"), w.String("task_statement");
    w.EndObject();
    std::function<util::Expected<std::string>(const std::string&)> read =
        [](const std::string& a) { return AnswerText(a, "task_statement", 64u << 10); };
    auto text = model::AskFor(model, req + "\n", read);
    if (!text.ok()) return util::Error{"task statement: " + text.error()};
    return text->value_or("");  // blank: fbkit's own Task section
  };
  return m;
}

void WriteTopFacts(const TopItem& item, util::JsonWriter& w) {
  const auto& names = TopFactNames();
  std::vector<size_t> order(names.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return names[a] < names[b]; });
  w.BeginObject();
  for (size_t i : order) {
    char number[32];
    std::snprintf(number, sizeof number, "%.6g", item.facts[i]);
    w.Key(names[i]), w.Raw(number);
  }
  w.EndObject();
}

TopChooser LlmTopChooser(model::Model& model, const Repo& repo) {
  return [&model, &repo](
             const std::string& f2p, const std::vector<TopCandidate>& cands,
             const std::vector<TopItem>& items) -> util::Expected<std::vector<Ent>> {
    std::function<util::Expected<std::vector<Ent>>(const std::string&)> read =
        [&repo, &cands](const std::string& a) { return Answer(repo, a, cands); };
    auto chosen = model::AskFor(model, Request(repo, f2p, cands, items), read);
    if (!chosen.ok()) return chosen.failure();
    return chosen->value_or(std::vector<Ent>{});  // empty: the default rule chooses
  };
}

}  // namespace fbkit::extract::make
