#include "extract/llm.h"

#include <nlohmann/json.hpp>

#include "tracer/llm_cmd.h"
#include "util/json_writer.h"

namespace fbkit::extract {

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
      ids.push_back(id);
    }
    if (ids.empty()) return util::Error{"answer names no top-level object"};
    return ids;
  } catch (const nlohmann::json::exception& e) {
    return util::Error{std::string("answer is not the expected JSON: ") + e.what()};
  }
}

}  // namespace

TopChooser LlmTopChooser(util::Env& env, tracer::Launcher& launcher, std::string cmd,
                         const Repo& repo, std::string work_dir) {
  return [&env, &launcher, cmd, &repo, work_dir](
             const std::string& f2p,
             const std::vector<TopCandidate>& cands) -> util::Expected<std::vector<std::string>> {
    auto out = tracer::RunLlmCommand(env, launcher, cmd, Request(repo, f2p, cands), work_dir);
    if (!out.ok()) return util::Error{out.error()};
    return Answer(*out, cands);
  };
}

}  // namespace fbkit::extract
