#include "graph/graph_io.h"

#include <nlohmann/json.hpp>

#include <cstring>
#include <set>

#include "util/json_writer.h"

namespace fbkit::graph {
namespace {

using util::JsonWriter;

const char* KindName(parser::EntityKind k) { return parser::EntityKindName(k); }

parser::EntityKind KindFromName(const std::string& s) {
  for (auto k : {parser::EntityKind::kModule, parser::EntityKind::kClass,
                 parser::EntityKind::kFunction, parser::EntityKind::kMethod}) {
    if (s == parser::EntityKindName(k)) return k;
  }
  return parser::EntityKind::kModule;
}

void WriteNames(JsonWriter& w, const std::vector<uint32_t>& idx,
                const std::vector<std::string>& names) {
  w.BeginArray();
  for (uint32_t i : idx) w.String(names[i]);
  w.EndArray();
}

std::string XmlEscape(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string DotEscape(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

}  // namespace

std::string GraphJson(const DepGraph& g, const std::string& root, const JoinStats& stats) {
  const auto& names = g.test_files();
  std::string out;
  JsonWriter w(&out);
  w.BeginObject();
  w.Key("edges");
  w.BeginArray();
  for (const auto& e : g.edges()) {
    out += '\n';
    w.BeginObject();
    if (e.kind == EdgeKind::kCall) w.Key("count"), w.Int(e.count);
    w.Key("from"), w.String(g.nodes()[e.from].id);
    w.Key("kind"), w.String(EdgeKindName(e.kind));
    if (e.kind == EdgeKind::kCall) w.Key("test_files"), WriteNames(w, e.test_files, names);
    w.Key("to"), w.String(g.nodes()[e.to].id);
    w.EndObject();
  }
  w.EndArray();
  w.Key("join");
  w.BeginObject();
  w.Key("identities"), w.Int(static_cast<int64_t>(stats.identities));
  w.Key("mapped"), w.Int(static_cast<int64_t>(stats.mapped));
  w.Key("unmapped");
  w.StringArray(stats.unmapped);
  w.EndObject();
  w.Key("nodes");
  w.BeginArray();
  for (const auto& n : g.nodes()) {
    out += '\n';
    w.BeginObject();
    w.Key("end_line"), w.Int(n.end_line);
    w.Key("id"), w.String(n.id);
    w.Key("kind"), w.String(KindName(n.kind));
    w.Key("lines"), w.Int(n.end_line - n.start_line + 1);
    w.Key("path"), w.String(n.path);
    w.Key("qualname"), w.String(n.qualname);
    w.Key("start_line"), w.Int(n.start_line);
    w.Key("test_files"), WriteNames(w, n.test_files, names);
    w.EndObject();
  }
  w.EndArray();
  w.Key("root"), w.String(root);
  w.Key("schema"), w.String(kGraphSchema);
  w.Key("test_files");
  w.StringArray(names);
  w.EndObject();
  out += '\n';
  return out;
}

util::Expected<DepGraph> ReadGraphJson(std::string_view text) {
  try {
    auto doc = nlohmann::json::parse(text);
    if (doc.value("schema", "") != kGraphSchema) {
      return util::Error{std::string("not an ") + kGraphSchema + " document"};
    }
    std::vector<std::string> files = doc.at("test_files").get<std::vector<std::string>>();
    std::unordered_map<std::string, uint32_t> file_index, node_index;
    for (uint32_t i = 0; i < files.size(); ++i) file_index[files[i]] = i;
    auto indices = [&](const nlohmann::json& list) {
      std::vector<uint32_t> out;
      for (const auto& f : list) out.push_back(file_index.at(f.get<std::string>()));
      return out;
    };
    std::vector<Node> nodes;
    for (const auto& n : doc.at("nodes")) {
      Node x{n.at("id").get<std::string>(), n.at("path").get<std::string>(),
             n.at("qualname").get<std::string>(), KindFromName(n.at("kind").get<std::string>()),
             n.at("start_line").get<int>(), n.at("end_line").get<int>(), indices(n.at("test_files"))};
      node_index[x.id] = static_cast<uint32_t>(nodes.size());
      nodes.push_back(std::move(x));
    }
    std::vector<Edge> edges;
    for (const auto& e : doc.at("edges")) {
      auto kind = EdgeKindFromName(e.at("kind").get<std::string>());
      if (!kind) return util::Error{"unknown edge kind " + e.at("kind").dump()};
      Edge x{node_index.at(e.at("from").get<std::string>()), node_index.at(e.at("to").get<std::string>()),
             *kind, e.value("count", int64_t{0}), {}};
      if (e.contains("test_files")) x.test_files = indices(e.at("test_files"));
      edges.push_back(std::move(x));
    }
    return DepGraph::FromParts(std::move(nodes), std::move(edges), std::move(files));
  } catch (const std::exception& e) {  // nlohmann errors and unknown ids (out_of_range)
    return util::Error{std::string("invalid graph JSON: ") + e.what()};
  }
}

namespace {

constexpr std::string_view kBinaryMagic = "FBKITGRAPH1\n";

class BinaryWriter {
 public:
  explicit BinaryWriter(std::string* out) : out_(out) {}
  void U32(uint32_t v) { out_->append(reinterpret_cast<const char*>(&v), sizeof v); }
  void I64(int64_t v) { out_->append(reinterpret_cast<const char*>(&v), sizeof v); }
  void Str(std::string_view s) {
    U32(static_cast<uint32_t>(s.size()));
    out_->append(s);
  }
  void List(const std::vector<uint32_t>& v) {
    U32(static_cast<uint32_t>(v.size()));
    for (uint32_t x : v) U32(x);
  }

 private:
  std::string* out_;
};

class BinaryReader {
 public:
  explicit BinaryReader(std::string_view in) : in_(in) {}
  bool ok() const { return ok_; }
  uint32_t U32() { return Fixed<uint32_t>(); }
  int64_t I64() { return Fixed<int64_t>(); }
  std::string Str() {
    uint32_t n = U32();
    if (!Need(n)) return "";
    std::string s(in_.substr(pos_, n));
    pos_ += n;
    return s;
  }
  std::vector<uint32_t> List() {
    uint32_t n = U32();
    std::vector<uint32_t> v;
    if (!Need(size_t{n} * 4)) return v;
    v.resize(n);
    std::memcpy(v.data(), in_.data() + pos_, size_t{n} * 4);
    pos_ += size_t{n} * 4;
    return v;
  }

 private:
  bool Need(size_t n) {
    if (pos_ + n > in_.size()) ok_ = false;
    return ok_;
  }
  template <typename T>
  T Fixed() {
    T v{};
    if (!Need(sizeof v)) return v;
    std::memcpy(&v, in_.data() + pos_, sizeof v);
    pos_ += sizeof v;
    return v;
  }
  std::string_view in_;
  size_t pos_ = 0;
  bool ok_ = true;
};

util::Expected<DepGraph> ReadGraphBinary(std::string_view data) {
  BinaryReader r(data.substr(kBinaryMagic.size()));
  std::vector<std::string> files(r.U32());
  for (auto& f : files) f = r.Str();
  std::vector<Node> nodes(r.ok() ? r.U32() : 0);
  for (auto& n : nodes) {
    n.id = r.Str();
    n.path = r.Str();
    n.qualname = r.Str();
    n.kind = static_cast<parser::EntityKind>(r.U32());
    n.start_line = static_cast<int>(r.U32());
    n.end_line = static_cast<int>(r.U32());
    n.test_files = r.List();
    if (!r.ok()) break;
  }
  std::vector<Edge> edges(r.ok() ? r.U32() : 0);
  for (auto& e : edges) {
    e.from = r.U32();
    e.to = r.U32();
    e.kind = static_cast<EdgeKind>(r.U32());
    e.count = r.I64();
    e.test_files = r.List();
    if (!r.ok() || e.from >= nodes.size() || e.to >= nodes.size() ||
        e.kind > EdgeKind::kInherits) {
      return util::Error{"invalid or truncated binary graph"};
    }
  }
  if (!r.ok()) return util::Error{"invalid or truncated binary graph"};
  return DepGraph::FromParts(std::move(nodes), std::move(edges), std::move(files));
}

}  // namespace

std::string GraphBinary(const DepGraph& g) {
  std::string out(kBinaryMagic);
  BinaryWriter w(&out);
  w.U32(static_cast<uint32_t>(g.test_files().size()));
  for (const auto& f : g.test_files()) w.Str(f);
  w.U32(static_cast<uint32_t>(g.nodes().size()));
  for (const auto& n : g.nodes()) {
    w.Str(n.id), w.Str(n.path), w.Str(n.qualname);
    w.U32(static_cast<uint32_t>(n.kind));
    w.U32(static_cast<uint32_t>(n.start_line)), w.U32(static_cast<uint32_t>(n.end_line));
    w.List(n.test_files);
  }
  w.U32(static_cast<uint32_t>(g.edges().size()));
  for (const auto& e : g.edges()) {
    w.U32(e.from), w.U32(e.to), w.U32(static_cast<uint32_t>(e.kind));
    w.I64(e.count);
    w.List(e.test_files);
  }
  return out;
}

util::Expected<DepGraph> ReadGraph(std::string_view data) {
  if (data.substr(0, kBinaryMagic.size()) == kBinaryMagic) return ReadGraphBinary(data);
  return ReadGraphJson(data);
}

std::string GraphMl(const DepGraph& g) {
  std::string out =
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<graphml xmlns=\"http://graphml.graphdrawing.org/xmlns\">\n"
      "  <key id=\"kind\" for=\"node\" attr.name=\"kind\" attr.type=\"string\"/>\n"
      "  <key id=\"path\" for=\"node\" attr.name=\"path\" attr.type=\"string\"/>\n"
      "  <key id=\"lines\" for=\"node\" attr.name=\"lines\" attr.type=\"int\"/>\n"
      "  <key id=\"tests\" for=\"node\" attr.name=\"test_files\" attr.type=\"int\"/>\n"
      "  <key id=\"ekind\" for=\"edge\" attr.name=\"kind\" attr.type=\"string\"/>\n"
      "  <key id=\"count\" for=\"edge\" attr.name=\"count\" attr.type=\"long\"/>\n"
      "  <graph id=\"fbkit\" edgedefault=\"directed\">\n";
  for (const auto& n : g.nodes()) {
    out += "    <node id=\"" + XmlEscape(n.id) + "\"><data key=\"kind\">" + KindName(n.kind) +
           "</data><data key=\"path\">" + XmlEscape(n.path) + "</data><data key=\"lines\">" +
           std::to_string(n.end_line - n.start_line + 1) + "</data><data key=\"tests\">" +
           std::to_string(n.test_files.size()) + "</data></node>\n";
  }
  for (const auto& e : g.edges()) {
    out += "    <edge source=\"" + XmlEscape(g.nodes()[e.from].id) + "\" target=\"" +
           XmlEscape(g.nodes()[e.to].id) + "\"><data key=\"ekind\">" + EdgeKindName(e.kind) +
           "</data><data key=\"count\">" + std::to_string(e.count) + "</data></edge>\n";
  }
  out += "  </graph>\n</graphml>\n";
  return out;
}

std::string GraphDot(const DepGraph& g, std::optional<uint32_t> focus, int depth) {
  std::set<uint32_t> keep;
  if (focus) {
    keep.insert(*focus);
    for (const auto& h : g.Deps(*focus, depth)) keep.insert(h.node);
    for (const auto& h : g.RDeps(*focus, depth)) keep.insert(h.node);
  }
  auto kept = [&](uint32_t v) { return !focus || keep.count(v); };
  static const char* kColour[] = {"lightgrey", "lightblue", "palegreen", "khaki"};
  static const char* kStyle[] = {"solid", "dotted", "dashed", "bold", "solid"};
  std::string out = "digraph fbkit {\n  rankdir=LR;\n  node [shape=box, style=filled, fontsize=10];\n";
  for (uint32_t v = 0; v < g.nodes().size(); ++v) {
    if (!kept(v)) continue;
    const Node& n = g.nodes()[v];
    out += "  \"" + DotEscape(n.id) + "\" [label=\"" + DotEscape(n.qualname == "<module>" ? n.path : n.qualname) +
           "\", fillcolor=" + kColour[static_cast<int>(n.kind)] +
           (focus && v == *focus ? ", penwidth=3" : "") + "];\n";
  }
  for (const auto& e : g.edges()) {
    if (!kept(e.from) || !kept(e.to)) continue;
    out += "  \"" + DotEscape(g.nodes()[e.from].id) + "\" -> \"" + DotEscape(g.nodes()[e.to].id) +
           "\" [style=" + kStyle[static_cast<int>(e.kind)] + ", label=\"" + EdgeKindName(e.kind) +
           (e.kind == EdgeKind::kCall ? " " + std::to_string(e.count) : "") + "\", fontsize=8];\n";
  }
  out += "}\n";
  return out;
}

}  // namespace fbkit::graph
