#include "groundtruth/matcher.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "util/json_docs.h"
#include "model/model.h"
#include "util/json_writer.h"

namespace fbkit::groundtruth {
namespace {

bool StopWord(const std::string& w) {
  static const std::set<std::string> kStop = {
      "the", "and", "for", "with", "that", "this", "from",  "into", "are", "was",
      "its", "an",  "of",  "to",   "in",   "on",   "by",    "is",   "it",  "be",
      "as",  "or",  "py",  "self", "at",   "when", "which", "new",  "add", "adds"};
  return kStop.count(w) > 0;
}

std::string RequestJson(const MatchRequest& r) {
  std::string out;
  util::JsonWriter w(&out);
  auto items = [&](const std::vector<MatchItem>& v) {
    w.BeginArray();
    for (const auto& i : v) {
      w.BeginObject();
      w.Key("id"), w.String(i.id);
      w.Key("text"), w.String(i.text);
      w.EndObject();
    }
    w.EndArray();
  };
  w.BeginObject();
  w.Key("candidates"), w.BeginArray();
  for (auto [t, p] : r.candidates) {
    w.BeginArray();
    w.String(r.truth[t].id);
    w.String(r.predicted[p].id);
    w.EndArray();
  }
  w.EndArray();
  w.Key("instance_id"), w.String(r.instance_id);
  w.Key("predicted"), items(r.predicted);
  w.Key("schema"), w.String("fbkit.llm-match/1");
  w.Key("task"), w.String(r.task);
  w.Key("truth"), items(r.truth);
  w.EndObject();
  return out + "\n";
}

util::Expected<std::vector<std::pair<size_t, size_t>>> ParseAnswer(const std::string& text,
                                                                   const MatchRequest& r) {
  std::map<std::pair<std::string, std::string>, std::pair<size_t, size_t>> allowed;
  for (auto [t, p] : r.candidates) allowed[{r.truth[t].id, r.predicted[p].id}] = {t, p};
  try {
    auto j = nlohmann::json::parse(text);
    std::vector<std::pair<size_t, size_t>> out;
    std::set<size_t> ts, ps;
    for (const auto& m : j.at("matches")) {
      auto key = std::make_pair(m.at(0).get<std::string>(), m.at(1).get<std::string>());
      auto it = allowed.find(key);
      if (it == allowed.end()) {
        return util::Error{"answer pairs " + key.first + " with " + key.second +
                           ", which is no candidate"};
      }
      if (!ts.insert(it->second.first).second || !ps.insert(it->second.second).second) {
        return util::Error{"answer uses " + key.first + " or " + key.second + " twice"};
      }
      out.push_back(it->second);
    }
    return out;
  } catch (const std::exception& e) {
    return util::Error{std::string("answer is not the expected JSON: ") + e.what()};
  }
}

}  // namespace

std::vector<std::string> Words(const std::string& text) {
  std::vector<std::string> out;
  std::string cur;
  auto flush = [&] {
    if (cur.size() > 1 && !StopWord(cur)) out.push_back(cur);
    cur.clear();
  };
  for (size_t i = 0; i < text.size(); ++i) {
    auto c = static_cast<unsigned char>(text[i]);
    if (std::isalnum(c)) {
      bool camel =
          std::isupper(c) && i > 0 && std::islower(static_cast<unsigned char>(text[i - 1]));
      if (camel) flush();
      cur += static_cast<char>(std::tolower(c));
    } else {
      flush();
    }
  }
  flush();
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

double Similarity(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  if (a.empty() && b.empty()) return 0;
  std::vector<std::string> common;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(common));
  return 2.0 * static_cast<double>(common.size()) / static_cast<double>(a.size() + b.size());
}

Matcher LexicalMatcher(double threshold) {
  return
      [threshold](const MatchRequest& r) -> util::Expected<std::vector<std::pair<size_t, size_t>>> {
        std::vector<std::vector<std::string>> tw, pw;
        for (const auto& t : r.truth) tw.push_back(Words(t.text));
        for (const auto& p : r.predicted) pw.push_back(Words(p.text));
        std::vector<std::tuple<double, size_t, size_t>> scored;
        for (auto [t, p] : r.candidates) {
          double s = Similarity(tw[t], pw[p]);
          if (s >= threshold) scored.emplace_back(-s, t, p);
        }
        std::sort(scored.begin(), scored.end());
        std::set<size_t> ts, ps;
        std::vector<std::pair<size_t, size_t>> out;
        for (auto [s, t, p] : scored) {
          if (ts.count(t) || ps.count(p)) continue;
          ts.insert(t), ps.insert(p);
          out.emplace_back(t, p);
        }
        return out;
      };
}

Matcher LlmMatcher(model::Model& model, Matcher fallback) {
  return [&model, fallback](
             const MatchRequest& r) -> util::Expected<std::vector<std::pair<size_t, size_t>>> {
    if (r.candidates.empty()) return std::vector<std::pair<size_t, size_t>>{};
    std::function<util::Expected<std::vector<std::pair<size_t, size_t>>>(const std::string&)>
        read = [&r](const std::string& answer) { return ParseAnswer(answer, r); };
    auto pairs = model::AskFor(model, RequestJson(r), read);
    if (!pairs.ok()) return pairs.failure();
    if (!*pairs) return fallback(r);
    return std::move(**pairs);
  };
}

}  // namespace fbkit::groundtruth
