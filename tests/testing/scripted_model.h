// The scripted model server (fixtures/agents/model/scripted_model.py) for end-to-end tests of
// fbkit's own model steps (--llm): started on a free port with a script of recorded replies,
// stopped by the destructor. No network beyond 127.0.0.1.
#pragma once

#include <signal.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/testing/e2e.h"
#include "tests/testing/run.h"

namespace fbkit::testing {

class ScriptedModel {
 public:
  // Serves `replies` (protocol_replies.py's list) from `dir`, which it fills.
  ScriptedModel(const std::string& dir, const nlohmann::json& replies) : dir_(dir) {
    std::filesystem::create_directories(dir + "/scripts");
    std::ofstream(dir + "/scripts/default.json") << nlohmann::json{{"replies", replies}}.dump(1);
    RunResult r = RunCommand({kPython, kSource + "/fixtures/agents/model/scripted_model.py",
                              "serve", "--port", "0", "--scripts", dir + "/scripts", "--log",
                              log(), "--port-file", dir + "/port", "--pid-file", dir + "/pid"});
    ok_ = r.exit_code == 0;
    if (ok_) {
      port_ = std::stoi(ReadFileOrDie(dir + "/port"));
      pid_ = std::stoi(ReadFileOrDie(dir + "/pid"));
    }
  }
  ~ScriptedModel() {
    if (pid_ > 0) ::kill(pid_, SIGTERM);
  }
  ScriptedModel(const ScriptedModel&) = delete;
  ScriptedModel& operator=(const ScriptedModel&) = delete;

  bool ok() const { return ok_; }
  // The base URL of the server, e.g. "http://127.0.0.1:PORT" + suffix ("/v1" for openai).
  std::string url(const std::string& suffix = "") const {
    return "http://127.0.0.1:" + std::to_string(port_) + suffix;
  }
  std::string log() const { return dir_ + "/requests.jsonl"; }
  // The requests the server answered so far, one JSON object each.
  std::vector<nlohmann::json> requests() const {
    std::vector<nlohmann::json> out;
    std::ifstream in(log());
    for (std::string line; std::getline(in, line);) {
      if (!line.empty()) out.push_back(nlohmann::json::parse(line));
    }
    return out;
  }

 private:
  std::string dir_;
  bool ok_ = false;
  int port_ = 0;
  int pid_ = 0;
};

}  // namespace fbkit::testing
