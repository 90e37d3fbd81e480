#include "extract/llm.h"

#include <unistd.h>

#include <atomic>
#include <nlohmann/json.hpp>

#include "util/json_writer.h"

namespace fbkit::extract {

namespace {

std::string Quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

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
  static std::atomic<int> counter{0};
  return [&env, &launcher, cmd, &repo, work_dir](
             const std::string& f2p,
             const std::vector<TopCandidate>& cands) -> util::Expected<std::vector<std::string>> {
    std::string base = util::JoinPath(
        work_dir, "llm-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    if (auto s = env.MakeDirs(work_dir); !s.ok()) return util::Error{s.error()};
    if (auto s = env.WriteFileAtomic(base + ".in", Request(repo, f2p, cands)); !s.ok()) {
      return util::Error{s.error()};
    }
    tracer::ProcessSpec spec;
    spec.argv = {"sh", "-c",
                 "(" + cmd + ") < " + Quote(base + ".in") + " > " + Quote(base + ".out")};
    spec.log_path = base + ".log";
    auto exit = tracer::RunToCompletion(launcher, spec);
    auto out = env.ReadFile(base + ".out");
    auto log = env.ReadFile(base + ".log");
    for (const char* ext : {".in", ".out", ".log"}) (void)env.RemoveAll(base + ext);
    if (!exit.ok()) return util::Error{exit.error()};
    if (exit->code != 0) {
      return util::Error{"'" + cmd + "' exited with status " + std::to_string(exit->code) + ": " +
                         (log.ok() ? log->substr(0, 500) : "")};
    }
    if (!out.ok()) return util::Error{out.error()};
    return Answer(*out, cands);
  };
}

}  // namespace fbkit::extract
