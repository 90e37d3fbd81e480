#include "parser/entities_json.h"

#include <nlohmann/json.hpp>

#include "util/json_writer.h"

namespace fbkit::parser {
namespace {

void WriteOptionalString(util::JsonWriter& w, const std::optional<std::string>& s) {
  if (s) {
    w.String(*s);
  } else {
    w.Null();
  }
}

void WriteEntity(util::JsonWriter& w, const Entity& e, bool references) {
  w.BeginObject();
  w.Key("decorators");
  w.StringArray(e.decorators);
  w.Key("def_line"), w.Int(e.def_line);
  w.Key("docstring"), WriteOptionalString(w, e.docstring);
  w.Key("end_byte"), w.Int(e.end_byte);
  w.Key("end_line"), w.Int(e.end_line);
  w.Key("id"), w.String(e.id);
  w.Key("is_async"), w.Bool(e.is_async);
  w.Key("kind"), w.String(EntityKindName(e.kind));
  w.Key("name"), w.String(e.name);
  w.Key("parent");
  if (e.parent.empty()) {
    w.Null();
  } else {
    w.String(e.parent);
  }
  w.Key("qualname"), w.String(e.qualname);
  if (references) {
    w.Key("references");
    w.StringArray(e.references);
  }
  w.Key("signature"), w.String(e.signature);
  w.Key("start_byte"), w.Int(e.start_byte);
  w.Key("start_line"), w.Int(e.start_line);
  if (references) {
    w.Key("value_reads");
    w.StringArray(e.value_reads);
  }
  w.EndObject();
}

void WriteImport(util::JsonWriter& w, const Import& imp) {
  w.BeginObject();
  w.Key("end_byte"), w.Int(imp.end_byte);
  w.Key("end_line"), w.Int(imp.end_line);
  w.Key("is_from"), w.Bool(imp.is_from);
  w.Key("level"), w.Int(imp.level);
  w.Key("line"), w.Int(imp.line);
  w.Key("module"), w.String(imp.module);
  w.Key("names");
  w.BeginArray();
  for (const auto& n : imp.names) {
    w.BeginObject();
    w.Key("alias"), WriteOptionalString(w, n.alias);
    w.Key("end_byte"), w.Int(n.end_byte);
    w.Key("name"), w.String(n.name);
    w.Key("start_byte"), w.Int(n.start_byte);
    w.EndObject();
  }
  w.EndArray();
  w.Key("scope"), w.String(imp.scope);
  w.Key("start_byte"), w.Int(imp.start_byte);
  w.EndObject();
}

void WriteAssignment(util::JsonWriter& w, const Assignment& a) {
  w.BeginObject();
  w.Key("end_byte"), w.Int(a.end_byte);
  w.Key("end_line"), w.Int(a.end_line);
  w.Key("line"), w.Int(a.line);
  w.Key("name"), w.String(a.name);
  w.Key("rebinds"), w.Bool(a.rebinds);
  w.Key("start_byte"), w.Int(a.start_byte);
  w.EndObject();
}

EntityKind KindFromName(const std::string& s) {
  if (s == "class") return EntityKind::kClass;
  if (s == "function") return EntityKind::kFunction;
  if (s == "method") return EntityKind::kMethod;
  return EntityKind::kModule;
}

std::optional<std::string> OptString(const nlohmann::json& j) {
  if (j.is_null()) return std::nullopt;
  return j.get<std::string>();
}

FileTable FileTableFromJson(const nlohmann::json& j) {
  FileTable t;
  t.path = j.at("path").get<std::string>();
  t.module = j.at("module").get<std::string>();
  t.sha256 = j.at("sha256").get<std::string>();
  for (const auto& e : j.at("parse_errors")) {
    t.parse_errors.push_back(ParseError{e.at("line").get<int>(), e.at("column").get<int>(),
                                        e.at("message").get<std::string>()});
  }
  for (const auto& e : j.at("entities")) {
    Entity x;
    x.id = e.at("id").get<std::string>();
    x.kind = KindFromName(e.at("kind").get<std::string>());
    x.name = e.at("name").get<std::string>();
    x.qualname = e.at("qualname").get<std::string>();
    x.parent = e.at("parent").is_null() ? "" : e.at("parent").get<std::string>();
    x.start_line = e.at("start_line").get<int>();
    x.def_line = e.at("def_line").get<int>();
    x.end_line = e.at("end_line").get<int>();
    x.start_byte = e.at("start_byte").get<int64_t>();
    x.end_byte = e.at("end_byte").get<int64_t>();
    x.is_async = e.at("is_async").get<bool>();
    x.decorators = e.at("decorators").get<std::vector<std::string>>();
    x.signature = e.at("signature").get<std::string>();
    x.docstring = OptString(e.at("docstring"));
    if (e.contains("references")) {
      x.references = e.at("references").get<std::vector<std::string>>();
      x.value_reads = e.at("value_reads").get<std::vector<std::string>>();
      t.has_references = true;
    }
    t.entities.push_back(std::move(x));
  }
  for (const auto& i : j.at("imports")) {
    Import imp;
    imp.line = i.at("line").get<int>();
    imp.end_line = i.at("end_line").get<int>();
    imp.start_byte = i.at("start_byte").get<int64_t>();
    imp.end_byte = i.at("end_byte").get<int64_t>();
    imp.module = i.at("module").get<std::string>();
    imp.level = i.at("level").get<int>();
    imp.is_from = i.at("is_from").get<bool>();
    imp.scope = i.at("scope").get<std::string>();
    for (const auto& n : i.at("names")) {
      imp.names.push_back(ImportName{n.at("name").get<std::string>(), OptString(n.at("alias")),
                                     n.at("start_byte").get<int64_t>(),
                                     n.at("end_byte").get<int64_t>()});
    }
    t.imports.push_back(std::move(imp));
  }
  if (!j.at("all").is_null()) t.all = j.at("all").get<std::vector<std::string>>();
  if (j.contains("import_time_reads")) {
    t.import_time_reads = j.at("import_time_reads").get<std::vector<std::string>>();
  }
  for (const auto& a : j.at("assignments")) {
    t.assignments.push_back(Assignment{a.at("name").get<std::string>(), a.at("line").get<int>(),
                                       a.at("end_line").get<int>(),
                                       a.at("start_byte").get<int64_t>(),
                                       a.at("end_byte").get<int64_t>(),
                                       a.value("rebinds", false)});
  }
  return t;
}

}  // namespace

void WriteParseErrors(util::JsonWriter& w, const std::vector<ParseError>& errors) {
  w.BeginArray();
  for (const auto& e : errors) {
    w.BeginObject();
    w.Key("column"), w.Int(e.column);
    w.Key("line"), w.Int(e.line);
    w.Key("message"), w.String(e.message);
    w.EndObject();
  }
  w.EndArray();
}

void AppendFileTableJson(const FileTable& t, std::string* out) {
  util::JsonWriter w(out);
  w.BeginObject();
  w.Key("all");
  if (t.all) {
    w.StringArray(*t.all);
  } else {
    w.Null();
  }
  w.Key("assignments");
  w.BeginArray();
  for (const auto& a : t.assignments) WriteAssignment(w, a);
  w.EndArray();
  w.Key("entities");
  w.BeginArray();
  for (const auto& e : t.entities) WriteEntity(w, e, t.has_references);
  w.EndArray();
  if (t.has_references) {
    w.Key("import_time_reads");
    w.StringArray(t.import_time_reads);
  }
  w.Key("imports");
  w.BeginArray();
  for (const auto& i : t.imports) WriteImport(w, i);
  w.EndArray();
  w.Key("module"), w.String(t.module);
  w.Key("parse_errors");
  WriteParseErrors(w, t.parse_errors);
  w.Key("path"), w.String(t.path);
  w.Key("sha256"), w.String(t.sha256);
  w.EndObject();
}

std::string EntitiesDocument(std::string_view root, const std::vector<std::string_view>& fragments,
                             const std::vector<FileError>& errors) {
  size_t total = 256;
  for (const auto& f : fragments) total += f.size() + 2;
  std::string out;
  out.reserve(total);
  out += "{\"errors\":[";
  for (size_t i = 0; i < errors.size(); ++i) {
    if (i) out += ',';
    util::JsonWriter w(&out);
    w.BeginObject();
    w.Key("message"), w.String(errors[i].message);
    w.Key("path"), w.String(errors[i].path);
    w.EndObject();
  }
  out += "],\"files\":[";
  for (size_t i = 0; i < fragments.size(); ++i) {
    out += i ? ",\n" : "\n";
    out += fragments[i];
  }
  out += "\n],\"root\":";
  util::AppendJsonString(root, &out);
  out += ",\"schema\":";
  util::AppendJsonString(kEntitiesSchema, &out);
  out += "}\n";
  return out;
}

util::Expected<FileTable> ParseFileTableJson(std::string_view json) {
  try {
    return FileTableFromJson(nlohmann::json::parse(json));
  } catch (const nlohmann::json::exception& e) {
    return util::Error{std::string("invalid entities JSON: ") + e.what()};
  }
}

util::Expected<std::vector<FileTable>> ParseEntitiesDocument(std::string_view json) {
  try {
    auto doc = nlohmann::json::parse(json);
    if (doc.value("schema", "") != kEntitiesSchema) {
      return util::Error{"not an " + std::string(kEntitiesSchema) + " document"};
    }
    std::vector<FileTable> files;
    for (const auto& f : doc.at("files")) files.push_back(FileTableFromJson(f));
    return files;
  } catch (const nlohmann::json::exception& e) {
    return util::Error{std::string("invalid entities JSON: ") + e.what()};
  }
}

}  // namespace fbkit::parser
