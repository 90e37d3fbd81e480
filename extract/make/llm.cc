#include "extract/make/llm.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "runner/model.h"
#include "util/json_writer.h"

namespace fbkit::extract::make {

namespace {

std::string Request(const Repo& repo, const std::string& f2p,
                    const std::vector<TopCandidate>& cands) {
  std::string out;
  util::JsonWriter w(&out);
  w.BeginObject();
  w.Key("candidates"), w.BeginArray();
  for (const auto& c : cands) {
    auto r = repo.Find(c.id);
    std::string source;
    if (r) {
      const auto& e = repo.entity(*r);
      source = repo.source(r->file).substr(static_cast<size_t>(e.start_byte),
                                           static_cast<size_t>(e.end_byte - e.start_byte));
    }
    w.BeginObject();
    w.Key("calls"), w.Int(c.calls);
    w.Key("depth"), w.Int(c.depth);
    w.Key("id"), w.String(c.id);
    w.Key("source"), w.String(source);
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

util::Expected<std::vector<std::string>> Answer(const std::string& text,
                                                const std::vector<TopCandidate>& cands) {
  try {
    nlohmann::json j = nlohmann::json::parse(text);
    if (j.is_object()) j = j.at("top_objects");
    std::vector<std::string> ids;
    for (const auto& x : j) {
      std::string id = x.get<std::string>();
      bool known = std::any_of(cands.begin(), cands.end(),
                               [&](const TopCandidate& c) { return c.id == id; });
      if (!known) return util::Error{"answer names '" + id + "', which is no candidate"};
      if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
    }
    if (ids.empty()) return util::Error{"answer names no top-level object"};
    return ids;
  } catch (const nlohmann::json::exception& e) {
    return util::Error{std::string("answer is not the expected JSON: ") + e.what()};
  }
}

std::string SourceOf(const Repo& repo, EntityRef r) {
  const auto& e = repo.entity(r);
  return repo.source(r.file).substr(static_cast<size_t>(e.start_byte),
                                    static_cast<size_t>(e.end_byte - e.start_byte));
}

void Signatures(util::JsonWriter& w, const Repo& repo, const std::vector<EntityRef>& refs) {
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
std::vector<EntityRef> Callers(const Repo& repo, const parser::Entity& e) {
  std::vector<EntityRef> out;
  for (size_t f = 0; f < repo.files().size() && out.size() < 8; ++f) {
    const auto& entities = repo.files()[f].entities;
    for (size_t i = 0; i < entities.size() && out.size() < 8; ++i) {
      const auto& c = entities[i];
      if (c.id == e.id || c.kind == parser::EntityKind::kModule) continue;
      bool names = std::any_of(c.references.begin(), c.references.end(), [&](const auto& r) {
        return r == e.name || r.ends_with("." + e.name);
      });
      if (names) out.push_back({f, i});
    }
  }
  return out;
}

// What `e` uses of its own module; at most 8.
std::vector<EntityRef> Callees(const Repo& repo, EntityRef r) {
  const auto& e = repo.entity(r);
  std::string path = repo.files()[r.file].path;
  std::vector<EntityRef> out;
  for (const auto& ref : e.references) {
    if (out.size() >= 8) break;
    auto found = repo.Find(path + "::" + std::string(Head(ref)));
    if (found && repo.entity(*found).id != e.id) out.push_back(*found);
  }
  return out;
}

std::string DocstringRequest(const Repo& repo, const std::string& repo_name, EntityRef r) {
  const auto& e = repo.entity(r);
  std::string out;
  util::JsonWriter w(&out);
  w.BeginObject();
  w.Key("callees"), Signatures(w, repo, Callees(repo, r));
  w.Key("callers"), Signatures(w, repo, Callers(repo, e));
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

StatementModel LlmStatementModel(runner::Model& model, const Repo& repo,
                                 std::string repo_name) {
  StatementModel m;
  m.docstring = [&model, &repo, repo_name](EntityRef r) -> util::Expected<std::string> {
    std::function<util::Expected<std::string>(const std::string&)> read =
        [](const std::string& a) { return AnswerText(a, "docstring", 16u << 10); };
    auto doc = runner::AskFor(model, DocstringRequest(repo, repo_name, r), read);
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
    auto text = runner::AskFor(model, req + "\n", read);
    if (!text.ok()) return util::Error{"task statement: " + text.error()};
    return text->value_or("");  // blank: fbkit's own Task section
  };
  return m;
}

TopChooser LlmTopChooser(runner::Model& model, const Repo& repo) {
  return [&model, &repo](
             const std::string& f2p,
             const std::vector<TopCandidate>& cands) -> util::Expected<std::vector<std::string>> {
    std::function<util::Expected<std::vector<std::string>>(const std::string&)> read =
        [&cands](const std::string& a) { return Answer(a, cands); };
    auto ids = runner::AskFor(model, Request(repo, f2p, cands), read);
    if (!ids.ok()) return util::Error{ids.error()};
    return ids->value_or(std::vector<std::string>{});  // empty: the default rule chooses
  };
}

}  // namespace fbkit::extract::make
