#include "agents/run_dir.h"

#include "util/env.h"

namespace fbkit::agents {

bool IsInferOutputDir(const std::string& dir) {
  return dir == kOutputDir || dir.ends_with(std::string("/") + kOutputDir);
}

std::string InferInstanceDir::workspace() const { return util::JoinPath(dir, "workspace"); }
std::string InferInstanceDir::statement() const { return util::JoinPath(dir, kStatementFile); }
std::string InferInstanceDir::output() const { return util::JoinPath(dir, kOutputDir); }
std::string InferInstanceDir::agent_log() const { return util::JoinPath(dir, "agent.log"); }
std::string InferInstanceDir::patch() const { return util::JoinPath(dir, kPatchFile); }
std::string InferInstanceDir::result() const { return util::JoinPath(dir, kResultFile); }
std::string InferInstanceDir::model() const { return util::JoinPath(dir, kModelFile); }

InferInstanceDir InferRunDir::instance(const std::string& id) const { return {util::JoinPath(dir, id)}; }
std::string InferRunDir::predictions() const { return util::JoinPath(dir, "predictions.jsonl"); }
std::string InferRunDir::summary(const util::Shard& shard) const {
  return util::JoinPath(dir, util::ShardFileName("infer_summary", "json", shard));
}
std::string InferRunDir::private_dir() const { return util::JoinPath(dir, ".fbkit"); }
std::string InferRunDir::base(const std::string& id) const {
  return util::JoinPath(private_dir(), "base/" + id + ".git");
}
std::string InferRunDir::scratch(const std::string& id) const {
  return util::JoinPath(private_dir(), "work/" + id);
}
std::string InferRunDir::trash() const { return util::JoinPath(private_dir(), "trash"); }
std::string InferRunDir::lock() const { return util::JoinPath(private_dir(), "lock"); }

std::string EvalRunDir::instance(const std::string& id) const { return util::JoinPath(dir, id); }
std::string EvalRunDir::report(const std::string& id) const {
  return util::JoinPath(instance(id), kReportFile);
}
std::string EvalRunDir::summary() const { return util::JoinPath(dir, "summary.json"); }
std::string EvalRunDir::work() const { return util::JoinPath(dir, ".work"); }
std::string EvalRunDir::work(const std::string& id) const { return util::JoinPath(work(), id); }
std::string EvalRunDir::lock() const { return util::JoinPath(dir, ".fbkit-lock"); }

}  // namespace fbkit::agents
