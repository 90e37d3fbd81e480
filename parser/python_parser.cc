#include "parser/python_parser.h"

#include <tree_sitter/api.h>
#include <utf8proc.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "parser/docstring.h"
#include "util/utf8.h"

extern "C" const TSLanguage* tree_sitter_python(void);

namespace fbkit::parser {

// The node types the walker cares about; everything else is kOther. Outside the anonymous
// namespace: PythonParser::Impl, a member of an exported class, holds a table of them.
enum class Sym : uint8_t {
  kOther,
  kModule,
  kBlock,
  kFunctionDefinition,
  kClassDefinition,
  kDecoratedDefinition,
  kDecorator,
  kDescend,  // compound statements and clauses whose blocks may hold definitions
  kImportStatement,
  kImportFromStatement,
  kFutureImportStatement,
  kAliasedImport,
  kDottedName,
  kRelativeImport,
  kImportPrefix,
  kWildcardImport,
  kExpressionStatement,
  kAssignment,
  kAugmentedAssignment,
  kIdentifier,
  kPatternList,  // tuple/list patterns and their parenthesised forms
  kListSplatPattern,
  kString,
  kConcatenatedString,
  kStringStart,
  kStringContent,
  kStringEnd,
  kInterpolation,
  kEscapeSequence,
  kList,
  kTuple,
  kExpressionList,  // a tuple without parentheses (`a, b`)
  kBinaryOperator,
  kCall,
  kAttribute,
  kArgumentList,
  kComment,  // comments and line continuations: extras that end no code
  kParenthesizedExpression,
  kPython2Statement,  // print and exec statements: tree-sitter accepts them, CPython 3 does not
  kParameters,
  kParameterWithValue,  // default_parameter, typed_parameter, typed_default_parameter
  kKeywordArgument,
  kSplatPattern,  // *args / **kwargs in a parameter list
};

namespace {

const std::unordered_map<std::string, Sym>& SymbolNames() {
  static const std::unordered_map<std::string, Sym> names = {
      {"module", Sym::kModule},
      {"block", Sym::kBlock},
      {"function_definition", Sym::kFunctionDefinition},
      {"class_definition", Sym::kClassDefinition},
      {"decorated_definition", Sym::kDecoratedDefinition},
      {"decorator", Sym::kDecorator},
      {"if_statement", Sym::kDescend},
      {"elif_clause", Sym::kDescend},
      {"else_clause", Sym::kDescend},
      {"for_statement", Sym::kDescend},
      {"while_statement", Sym::kDescend},
      {"try_statement", Sym::kDescend},
      {"except_clause", Sym::kDescend},
      {"except_group_clause", Sym::kDescend},
      {"finally_clause", Sym::kDescend},
      {"with_statement", Sym::kDescend},
      {"match_statement", Sym::kDescend},
      {"case_clause", Sym::kDescend},
      {"import_statement", Sym::kImportStatement},
      {"import_from_statement", Sym::kImportFromStatement},
      {"future_import_statement", Sym::kFutureImportStatement},
      {"aliased_import", Sym::kAliasedImport},
      {"dotted_name", Sym::kDottedName},
      {"relative_import", Sym::kRelativeImport},
      {"import_prefix", Sym::kImportPrefix},
      {"wildcard_import", Sym::kWildcardImport},
      {"expression_statement", Sym::kExpressionStatement},
      {"assignment", Sym::kAssignment},
      {"augmented_assignment", Sym::kAugmentedAssignment},
      {"identifier", Sym::kIdentifier},
      {"pattern_list", Sym::kPatternList},
      {"tuple_pattern", Sym::kPatternList},
      {"list_pattern", Sym::kPatternList},
      {"list_splat_pattern", Sym::kListSplatPattern},
      {"string", Sym::kString},
      {"concatenated_string", Sym::kConcatenatedString},
      {"string_start", Sym::kStringStart},
      {"string_content", Sym::kStringContent},
      {"string_end", Sym::kStringEnd},
      {"interpolation", Sym::kInterpolation},
      {"escape_sequence", Sym::kEscapeSequence},
      {"list", Sym::kList},
      {"tuple", Sym::kTuple},
      {"expression_list", Sym::kExpressionList},
      {"binary_operator", Sym::kBinaryOperator},
      {"call", Sym::kCall},
      {"attribute", Sym::kAttribute},
      {"argument_list", Sym::kArgumentList},
      {"comment", Sym::kComment},
      {"line_continuation", Sym::kComment},
      {"parenthesized_expression", Sym::kParenthesizedExpression},
      {"print_statement", Sym::kPython2Statement},
      {"parameters", Sym::kParameters},
      {"lambda_parameters", Sym::kParameters},
      {"default_parameter", Sym::kParameterWithValue},
      {"typed_parameter", Sym::kParameterWithValue},
      {"typed_default_parameter", Sym::kParameterWithValue},
      {"keyword_argument", Sym::kKeywordArgument},
      {"dictionary_splat_pattern", Sym::kSplatPattern},
      {"exec_statement", Sym::kPython2Statement},
  };
  return names;
}

// Iterates a node's children (anonymous ones too) with a cursor: O(1) per step, where
// ts_node_child(i) would be O(i).
class Children {
 public:
  explicit Children(TSNode node) : cursor_(ts_tree_cursor_new(node)) {
    valid_ = ts_tree_cursor_goto_first_child(&cursor_);
  }
  ~Children() { ts_tree_cursor_delete(&cursor_); }
  Children(const Children&) = delete;
  Children& operator=(const Children&) = delete;
  bool valid() const { return valid_; }
  TSNode node() const { return ts_tree_cursor_current_node(&cursor_); }
  TSFieldId field() const { return ts_tree_cursor_current_field_id(&cursor_); }
  void Next() { valid_ = ts_tree_cursor_goto_next_sibling(&cursor_); }

 private:
  TSTreeCursor cursor_;
  bool valid_;
};

}  // namespace

struct PythonParser::Impl {
  TSParser* parser = nullptr;
  std::vector<Sym> sym_of;  // indexed by TSSymbol
  TSFieldId f_name = 0, f_body = 0, f_module_name = 0, f_alias = 0, f_left = 0, f_right = 0,
            f_definition = 0, f_function = 0, f_object = 0, f_attribute = 0, f_arguments = 0,
            f_operator = 0, f_value = 0, f_type = 0, f_parameters = 0;

  ~Impl() {
    if (parser != nullptr) ts_parser_delete(parser);
  }
  Sym SymOf(TSNode n) const {
    TSSymbol s = ts_node_symbol(n);
    if (s == kErrorSymbol) return Sym::kDescend;  // ERROR: recovered code may hold defs
    return s < sym_of.size() ? sym_of[s] : Sym::kOther;
  }
  // The last token of a node, skipping trailing comments: its end is where the node's code
  // ends (the node's own extent may run over comments and the newline).
  TSNode LastToken(TSNode n) const {
    for (;;) {
      uint32_t count = ts_node_child_count(n);
      if (count == 0) return n;
      TSNode last = {};
      bool found = false;
      for (Children c(n); c.valid(); c.Next()) {
        TSNode child = c.node();
        if (SymOf(child) == Sym::kComment) continue;
        last = child;
        found = true;
      }
      if (!found) return n;
      n = last;
    }
  }
  static constexpr TSSymbol kErrorSymbol = static_cast<TSSymbol>(-1);
};

namespace {

// The walk over one file: state for one Parse() call.
class Walker {
 public:
  // `src` is the file's text after any BOM (what the tree's offsets index); `latin1` says
  // the file declares a Latin-1 coding, so text taken from it is decoded from Latin-1.
  Walker(const PythonParser::Impl& impl, std::string_view src, int64_t byte_offset, bool latin1,
         FileTable* table, std::vector<PythonParser::AllList>* all_lists = nullptr)
      : impl_(impl), src_(src), offset_(byte_offset), latin1_(latin1), table_(table),
        all_lists_(all_lists) {}

  void Run(TSNode root, bool references) {
    AddModuleEntity(root);
    entity_nodes_.push_back(root);
    VisitChildren(root, Scope{0, false, true});
    if (ts_node_has_error(root)) CollectErrors(root);
    if (references) {
      CollectReferences();
      CollectImportTimeReads(root);
    }
  }

 private:
  struct Scope {
    size_t entity;  // index into table_->entities
    bool in_class;  // the entity is a class: defs directly inside are methods
    bool module_level;
  };

  Sym SymOf(TSNode n) const { return impl_.SymOf(n); }
  std::string_view Text(TSNode n) const {
    uint32_t b = ts_node_start_byte(n), e = ts_node_end_byte(n);
    return src_.substr(b, e - b);
  }
  // Text for the output: as written, or decoded from Latin-1 when the file says so.
  std::string Str(TSNode n) const { return Decode(Text(n)); }
  std::string Decode(std::string_view raw) const {
    if (!latin1_) return std::string(raw);
    std::string out;
    for (char c : raw) {
      auto b = static_cast<unsigned char>(c);
      if (b < 0x80) {
        out.push_back(c);
      } else {
        out.push_back(static_cast<char>(0xC0 | (b >> 6)));
        out.push_back(static_cast<char>(0x80 | (b & 0x3F)));
      }
    }
    return out;
  }
  // An identifier as CPython names it: non-ASCII identifiers are NFKC-normalised (PEP 3131).
  std::string Identifier(TSNode n) const {
    std::string raw = Str(n);
    bool ascii = std::all_of(raw.begin(), raw.end(),
                             [](char c) { return static_cast<unsigned char>(c) < 0x80; });
    if (ascii) return raw;
    utf8proc_uint8_t* nfkc = utf8proc_NFKC(reinterpret_cast<const utf8proc_uint8_t*>(raw.c_str()));
    if (nfkc == nullptr) return raw;
    std::string out(reinterpret_cast<char*>(nfkc));
    std::free(nfkc);
    return out;
  }
  int Line(TSPoint p) const { return static_cast<int>(p.row) + 1; }
  int64_t Byte(uint32_t b) const { return offset_ + b; }

  TSNode LastToken(TSNode n) const { return impl_.LastToken(n); }

  void VisitChildren(TSNode node, const Scope& scope) {
    for (Children c(node); c.valid(); c.Next()) {
      TSNode child = c.node();
      if (ts_node_is_named(child)) Visit(child, scope);
    }
  }

  void Visit(TSNode node, const Scope& scope) {
    switch (SymOf(node)) {
      case Sym::kFunctionDefinition:
      case Sym::kClassDefinition:
        AddDefinition(node, node, scope);
        return;
      case Sym::kDecoratedDefinition: {
        TSNode def = ts_node_child_by_field_id(node, impl_.f_definition);
        if (!ts_node_is_null(def)) AddDefinition(node, def, scope);
        return;
      }
      case Sym::kBlock:
      case Sym::kDescend:
        VisitChildren(node, scope);
        return;
      case Sym::kImportStatement:
      case Sym::kImportFromStatement:
      case Sym::kFutureImportStatement:
        AddImports(node, scope);
        return;
      case Sym::kExpressionStatement:
        if (scope.module_level) AddModuleStatement(node);
        return;
      case Sym::kPython2Statement:
        AddError(ts_node_start_point(node),
                 "Python 2 " + std::string(Text(ts_node_child(node, 0))) + " statement");
        return;
      default:
        return;
    }
  }

  void AddModuleEntity(TSNode root) {
    Entity m;
    m.id = table_->path + "::<module>";
    m.kind = EntityKind::kModule;
    size_t dot = table_->module.rfind('.');
    m.name = dot == std::string::npos ? table_->module : table_->module.substr(dot + 1);
    m.qualname = "<module>";
    m.start_line = m.def_line = 1;
    TSPoint end = ts_node_end_point(root);
    m.end_line = std::max(1, static_cast<int>(end.row) + (end.column > 0 ? 1 : 0));
    m.start_byte = 0;
    m.end_byte = offset_ + static_cast<int64_t>(src_.size());
    m.docstring = Docstring(root);
    table_->entities.push_back(std::move(m));
  }

  void AddDefinition(TSNode outer, TSNode def, const Scope& scope) {
    TSNode name = ts_node_child_by_field_id(def, impl_.f_name);
    if (ts_node_is_null(name) || ts_node_is_missing(name)) {
      VisitChildren(def, scope);  // keep what recovery left inside
      return;
    }
    bool is_class = SymOf(def) == Sym::kClassDefinition;
    const Entity& parent = table_->entities[scope.entity];
    Entity e;
    e.name = Identifier(name);
    e.qualname = parent.kind == EntityKind::kModule ? e.name : parent.qualname + "." + e.name;
    e.id = UniqueId(e.qualname);
    e.parent = parent.id;
    e.kind = is_class ? EntityKind::kClass
                      : (scope.in_class ? EntityKind::kMethod : EntityKind::kFunction);
    e.start_line = SymOf(outer) == Sym::kDecoratedDefinition ? FirstDecoratorLine(outer)
                                                             : Line(ts_node_start_point(def));
    e.def_line = Line(ts_node_start_point(def));
    TSNode last = LastToken(def);
    e.end_line = Line(ts_node_end_point(last));
    e.start_byte = Byte(ts_node_start_byte(outer));
    e.end_byte = Byte(ts_node_end_byte(last));
    TSNode first = ts_node_child(def, 0);
    e.is_async = !is_class && !ts_node_is_null(first) && Text(first) == "async";
    if (SymOf(outer) == Sym::kDecoratedDefinition) e.decorators = Decorators(outer);
    TSNode body = ts_node_child_by_field_id(def, impl_.f_body);
    e.signature = Signature(def, name, body);
    if (!ts_node_is_null(body)) e.docstring = Docstring(body);
    table_->entities.push_back(std::move(e));
    entity_nodes_.push_back(def);
    if (!ts_node_is_null(body)) {
      VisitChildren(body, Scope{table_->entities.size() - 1, is_class, false});
    }
  }

  // -- references: the names each entity's own code uses ------------------------------
  void CollectReferences() {
    table_->has_references = true;
    for (size_t i = 0; i < entity_nodes_.size(); ++i) {
      std::set<std::string> names, values;
      TSNode node = entity_nodes_[i];
      for (Children c(node); c.valid(); c.Next()) {
        if (c.field() == impl_.f_name && i > 0) continue;  // its own name
        Names(c.node(), &names, &values);
      }
      // Its decorators' arguments (`@pytest.mark.parametrize("x", [make()])`) too.
      TSNode outer = i > 0 ? ts_node_parent(node) : TSNode{};
      if (!ts_node_is_null(outer) && SymOf(outer) == Sym::kDecoratedDefinition) {
        for (Children c(outer); c.valid(); c.Next()) {
          if (SymOf(c.node()) == Sym::kDecorator) Names(c.node(), &names, &values);
        }
      }
      table_->entities[i].references.assign(names.begin(), names.end());
      table_->entities[i].value_reads.assign(values.begin(), values.end());
    }
  }

  // -- what the module's code reads when it is imported ---------------------------------
  void CollectImportTimeReads(TSNode module) {
    std::set<std::string> names, heads;
    ImportTimeBlock(module, false, &names);
    for (const auto& n : names) heads.insert(n.substr(0, n.find('.')));
    table_->import_time_reads.assign(heads.begin(), heads.end());
  }

  void ImportTimeBlock(TSNode block, bool in_class, std::set<std::string>* out) const {
    for (Children c(block); c.valid(); c.Next()) {
      TSNode s = c.node();
      switch (SymOf(s)) {
        case Sym::kExpressionStatement:
          for (Children e(s); e.valid(); e.Next()) {
            if (ts_node_is_named(e.node())) AssignedValue(e.node(), out);
          }
          break;
        case Sym::kDecoratedDefinition:
          for (Children d(s); d.valid(); d.Next()) {
            if (SymOf(d.node()) == Sym::kDecorator) Names(d.node(), out);
            if (d.field() == impl_.f_definition) ImportTimeDefinition(d.node(), in_class, out);
          }
          break;
        case Sym::kFunctionDefinition:
        case Sym::kClassDefinition:
          ImportTimeDefinition(s, in_class, out);
          break;
        default:
          break;
      }
    }
  }

  // An expression statement's expression, or the value an assignment binds (`a = b = f()`).
  void AssignedValue(TSNode n, std::set<std::string>* out) const {
    if (SymOf(n) == Sym::kAssignment || SymOf(n) == Sym::kAugmentedAssignment) {
      TSNode right = ts_node_child_by_field_id(n, impl_.f_right);
      if (!ts_node_is_null(right)) AssignedValue(right, out);
      return;
    }
    Names(n, out);
  }

  // A class body runs; a method's defaults are evaluated (a function's body is not).
  void ImportTimeDefinition(TSNode d, bool in_class, std::set<std::string>* out) const {
    if (SymOf(d) == Sym::kClassDefinition) {
      TSNode body = ts_node_child_by_field_id(d, impl_.f_body);
      if (!ts_node_is_null(body)) ImportTimeBlock(body, true, out);
    } else if (in_class) {
      TSNode params = ts_node_child_by_field_id(d, impl_.f_parameters);
      if (!ts_node_is_null(params)) Names(params, out);
    }
  }

  // The names `n`'s code reads into `out`; into `values` too, those read other than as the
  // callee of a call (`f` in `x = f` or `g(f)`, not in `f()`; `m.f` likewise).
  void Names(TSNode n, std::set<std::string>* out, std::set<std::string>* values = nullptr,
             bool callee = false) const {
    auto add = [&](const std::string& name) {
      out->insert(name);
      if (values && !callee) values->insert(name);
    };
    auto each = [&](TSNode child) { Names(child, out, values); };
    switch (SymOf(n)) {
      case Sym::kDecoratedDefinition:  // its decorators count for the decorated entity
      case Sym::kFunctionDefinition:
      case Sym::kClassDefinition:
      case Sym::kComment:
      case Sym::kSplatPattern:
      case Sym::kImportStatement:
      case Sym::kImportFromStatement:
      case Sym::kFutureImportStatement:
        return;           // nested entities keep their own references; imports are import edges
      case Sym::kString:  // only an f-string's interpolations hold code
        for (Children c(n); c.valid(); c.Next()) {
          if (SymOf(c.node()) == Sym::kInterpolation) each(c.node());
        }
        return;
      case Sym::kIdentifier:
        add(Identifier(n));
        return;
      case Sym::kAttribute:
        if (std::string dotted = DottedChain(n); !dotted.empty()) {
          add(dotted);
          return;
        }
        break;
      case Sym::kCall:
        for (Children c(n); c.valid(); c.Next()) {
          if (!ts_node_is_named(c.node())) continue;
          Names(c.node(), out, values, c.field() == impl_.f_function);
        }
        return;
      case Sym::kParameters:
        for (Children c(n); c.valid(); c.Next()) {
          if (SymOf(c.node()) == Sym::kParameterWithValue) each(c.node());
        }
        return;
      case Sym::kParameterWithValue:
      case Sym::kKeywordArgument:  // only the default / value and the annotation
        for (Children c(n); c.valid(); c.Next()) {
          if (c.field() == impl_.f_value || c.field() == impl_.f_type) each(c.node());
        }
        return;
      default:
        break;
    }
    for (Children c(n); c.valid(); c.Next()) {
      if (ts_node_is_named(c.node())) each(c.node());
    }
  }

  // "a.b.c" for an attribute chain over a plain identifier; "" otherwise.
  std::string DottedChain(TSNode n) const {
    if (SymOf(n) == Sym::kIdentifier) return Identifier(n);
    if (SymOf(n) != Sym::kAttribute) return "";
    TSNode obj = ts_node_child_by_field_id(n, impl_.f_object);
    TSNode attr = ts_node_child_by_field_id(n, impl_.f_attribute);
    if (ts_node_is_null(obj) || ts_node_is_null(attr)) return "";
    std::string base = DottedChain(obj);
    return base.empty() ? "" : base + "." + Identifier(attr);
  }

  std::string UniqueId(const std::string& qualname) {
    int n = ++qualname_count_[qualname];
    std::string id = table_->path + "::" + qualname;
    if (n > 1) id += "#" + std::to_string(n);
    return id;
  }

  // CPython's co_firstlineno for a decorated def: the line of the first decorator's
  // expression, parentheses around it not counted ("@(\n  deco\n)" gives deco's line).
  int FirstDecoratorLine(TSNode decorated) const {
    TSNode deco = ts_node_named_child(decorated, 0);
    TSNode expr = DecoratorExpression(deco);
    while (!ts_node_is_null(expr) && SymOf(expr) == Sym::kParenthesizedExpression) {
      TSNode inner = FirstNamedNonComment(expr);
      if (ts_node_is_null(inner)) break;
      expr = inner;
    }
    return Line(ts_node_start_point(ts_node_is_null(expr) ? decorated : expr));
  }

  TSNode FirstNamedNonComment(TSNode n) const {
    for (Children c(n); c.valid(); c.Next()) {
      if (ts_node_is_named(c.node()) && SymOf(c.node()) != Sym::kComment) return c.node();
    }
    return TSNode{};
  }

  TSNode DecoratorExpression(TSNode deco) const {
    if (ts_node_is_null(deco) || SymOf(deco) != Sym::kDecorator) return TSNode{};
    return FirstNamedNonComment(deco);
  }

  std::vector<std::string> Decorators(TSNode decorated) const {
    std::vector<std::string> out;
    for (Children c(decorated); c.valid(); c.Next()) {
      TSNode child = c.node();
      if (SymOf(child) != Sym::kDecorator) continue;
      TSNode expr = DecoratorExpression(child);
      if (!ts_node_is_null(expr)) out.push_back(Str(expr));
    }
    return out;
  }

  // The text between the name and the ':' that opens the body, trimmed: parameters and
  // return annotation for a def (type parameters too), bases and keywords for a class.
  std::string Signature(TSNode def, TSNode name, TSNode body) const {
    uint32_t begin = ts_node_end_byte(name), end = begin;
    for (Children c(def); c.valid(); c.Next()) {
      TSNode child = c.node();
      if (!ts_node_is_null(body) && ts_node_start_byte(child) >= ts_node_start_byte(body)) break;
      if (!ts_node_is_named(child) && Text(child) == ":") end = ts_node_start_byte(child);
    }
    std::string_view s = src_.substr(begin, end > begin ? end - begin : 0);
    size_t b = s.find_first_not_of(" \t\r\n\f\\");
    if (b == std::string_view::npos) return "";
    size_t e = s.find_last_not_of(" \t\r\n\f\\");
    return Decode(s.substr(b, e - b + 1));
  }

  // The docstring of a module or def body: its first statement, if a plain string literal.
  std::optional<std::string> Docstring(TSNode body) const {
    for (Children c(body); c.valid(); c.Next()) {
      TSNode stmt = c.node();
      if (!ts_node_is_named(stmt) || SymOf(stmt) == Sym::kComment) continue;
      if (SymOf(stmt) != Sym::kExpressionStatement || ts_node_named_child_count(stmt) != 1) {
        return std::nullopt;
      }
      TSNode expr = ts_node_named_child(stmt, 0);
      while (SymOf(expr) == Sym::kParenthesizedExpression && ts_node_named_child_count(expr) == 1) {
        expr = ts_node_named_child(expr, 0);  // ("doc") is a docstring too
      }
      if (SymOf(expr) == Sym::kString) return StringLiteralValue({expr});
      if (SymOf(expr) == Sym::kConcatenatedString) {
        std::vector<TSNode> parts;
        for (Children p(expr); p.valid(); p.Next()) {
          if (SymOf(p.node()) == Sym::kString) parts.push_back(p.node());
        }
        return StringLiteralValue(parts);
      }
      return std::nullopt;
    }
    return std::nullopt;
  }

  // The value of adjacent string literals, cleaned like inspect.cleandoc; nullopt for bytes
  // and f-strings (CPython does not take those as docstrings).
  std::optional<std::string> StringLiteralValue(const std::vector<TSNode>& parts) const {
    std::string value;
    for (TSNode part : parts) {
      auto piece = PlainStringValue(part);
      if (!piece) return std::nullopt;
      value += *piece;
    }
    return CleanDocstring(value);
  }

  // The decoded value of one string literal without interpolations; nullopt otherwise.
  std::optional<std::string> PlainStringValue(TSNode str) const {
    TSNode start = ts_node_child(str, 0);
    if (ts_node_is_null(start) || SymOf(start) != Sym::kStringStart) return std::nullopt;
    std::string_view prefix = Text(start);
    bool raw = false;
    for (char ch : prefix) {
      if (ch == 'f' || ch == 'F' || ch == 'b' || ch == 'B') return std::nullopt;
      if (ch == 'r' || ch == 'R') raw = true;
    }
    uint32_t count = ts_node_child_count(str);
    TSNode end = ts_node_child(str, count - 1);
    uint32_t b = ts_node_end_byte(start);
    uint32_t e = SymOf(end) == Sym::kStringEnd ? ts_node_start_byte(end) : ts_node_end_byte(str);
    if (e < b) return std::nullopt;
    std::string_view body = src_.substr(b, e - b);
    return raw ? Decode(body) : DecodeEscapes(Decode(body));
  }

  void AddImports(TSNode stmt, const Scope& scope) {
    Import base;
    base.line = Line(ts_node_start_point(stmt));
    base.end_line = Line(ts_node_end_point(LastToken(stmt)));
    base.start_byte = Byte(ts_node_start_byte(stmt));
    base.end_byte = Byte(ts_node_end_byte(LastToken(stmt)));
    base.scope = table_->entities[scope.entity].id;
    Sym kind = SymOf(stmt);
    if (kind == Sym::kImportStatement) {
      // `import a.b as c, d`: one record per imported module.
      for (Children c(stmt); c.valid(); c.Next()) {
        if (c.field() != impl_.f_name) continue;
        ImportName n = ImportedName(c.node());
        Import imp = base;
        imp.module = n.name;
        imp.names.push_back(std::move(n));
        table_->imports.push_back(std::move(imp));
      }
      return;
    }
    base.is_from = true;
    if (kind == Sym::kFutureImportStatement) {
      base.module = "__future__";
    } else {
      TSNode mod = ts_node_child_by_field_id(stmt, impl_.f_module_name);
      if (!ts_node_is_null(mod)) SetFromModule(mod, &base);
    }
    for (Children c(stmt); c.valid(); c.Next()) {
      TSNode child = c.node();
      if (c.field() == impl_.f_name) {
        base.names.push_back(ImportedName(child));
      } else if (SymOf(child) == Sym::kWildcardImport) {
        base.names.push_back(ImportName{"*", std::nullopt, Byte(ts_node_start_byte(child)),
                                        Byte(ts_node_end_byte(child))});
      }
    }
    table_->imports.push_back(std::move(base));
  }

  void SetFromModule(TSNode mod, Import* imp) const {
    if (SymOf(mod) == Sym::kDottedName) {
      imp->module = DottedText(mod);
      return;
    }
    for (Children c(mod); c.valid(); c.Next()) {  // relative_import: prefix + dotted name
      TSNode child = c.node();
      if (SymOf(child) == Sym::kImportPrefix) {
        std::string_view dots = Text(child);
        imp->level = static_cast<int>(std::count(dots.begin(), dots.end(), '.'));
      } else if (SymOf(child) == Sym::kDottedName) {
        imp->module = DottedText(child);
      }
    }
  }

  ImportName ImportedName(TSNode n) const {
    ImportName out;
    out.start_byte = Byte(ts_node_start_byte(n));
    out.end_byte = Byte(ts_node_end_byte(n));
    if (SymOf(n) == Sym::kAliasedImport) {
      TSNode name = ts_node_child_by_field_id(n, impl_.f_name);
      TSNode alias = ts_node_child_by_field_id(n, impl_.f_alias);
      out.name = ts_node_is_null(name) ? "" : DottedText(name);
      if (!ts_node_is_null(alias)) out.alias = Identifier(alias);
    } else {
      out.name = DottedText(n);
    }
    return out;
  }

  // A dotted name without the spaces, comments or line continuations it may be written with.
  std::string DottedText(TSNode n) const {
    if (SymOf(n) != Sym::kDottedName) return Identifier(n);
    std::string out;
    for (Children c(n); c.valid(); c.Next()) {
      if (SymOf(c.node()) != Sym::kIdentifier) continue;
      if (!out.empty()) out += '.';
      out += Identifier(c.node());
    }
    return out;
  }

  // A module-level expression statement: assignments bind names; __all__ is tracked.
  void AddModuleStatement(TSNode stmt) {
    TSNode expr = ts_node_named_child(stmt, 0);
    if (ts_node_is_null(expr)) return;
    Sym kind = SymOf(expr);
    if (kind == Sym::kAssignment || kind == Sym::kAugmentedAssignment) {
      std::vector<std::string> names;
      std::set<std::string> reads;  // heads of the names the bound value reads
      TSNode value = expr;
      while (!ts_node_is_null(value) &&
             (SymOf(value) == Sym::kAssignment || SymOf(value) == Sym::kAugmentedAssignment)) {
        TSNode right = ts_node_child_by_field_id(value, impl_.f_right);
        if (ts_node_is_null(right) && SymOf(value) == Sym::kAssignment) break;  // `x: int`
        size_t first = names.size();
        CollectTargets(ts_node_child_by_field_id(value, impl_.f_left), &names);
        if (SymOf(value) == Sym::kAugmentedAssignment) {
          reads.insert(names.begin() + static_cast<std::ptrdiff_t>(first), names.end());
        }
        TrackAll(value, right);
        value = right;
      }
      std::set<std::string> value_names;
      if (!ts_node_is_null(value)) Names(value, &value_names);
      for (const auto& n : value_names) reads.insert(n.substr(0, n.find('.')));
      TSNode last = LastToken(stmt);
      for (auto& name : names) {
        bool rebinds = reads.count(name) > 0;
        table_->assignments.push_back(Assignment{
            std::move(name), Line(ts_node_start_point(stmt)), Line(ts_node_end_point(last)),
            Byte(ts_node_start_byte(stmt)), Byte(ts_node_end_byte(last)), rebinds});
      }
    } else if (kind == Sym::kCall) {
      TrackAllCall(expr);
    }
  }

  void CollectTargets(TSNode target, std::vector<std::string>* names) const {
    if (ts_node_is_null(target)) return;
    switch (SymOf(target)) {
      case Sym::kIdentifier:
        names->push_back(Identifier(target));
        return;
      case Sym::kPatternList:
      case Sym::kListSplatPattern:
      case Sym::kTuple:
      case Sym::kList:
      case Sym::kParenthesizedExpression:
        for (Children c(target); c.valid(); c.Next()) {
          if (ts_node_is_named(c.node())) CollectTargets(c.node(), names);
        }
        return;
      default:
        return;  // attributes and subscripts bind no module-level name
    }
  }

  // `__all__ = [...]` (or a sum of literals) sets it, `__all__ += [...]` extends it; a
  // non-literal assignment makes it unknown (null).
  void TrackAll(TSNode assign, TSNode right) {
    TSNode left = ts_node_child_by_field_id(assign, impl_.f_left);
    if (ts_node_is_null(left) || SymOf(left) != Sym::kIdentifier || Text(left) != "__all__") {
      return;
    }
    std::vector<std::string> items;
    std::vector<std::pair<int64_t, int64_t>> spans;
    bool literal = !ts_node_is_null(right) && LiteralStrings(right, &items, &spans);
    if (literal && all_lists_) {
      PythonParser::AllList list;
      list.statement_start = Byte(ts_node_start_byte(assign));
      list.value = {Byte(ts_node_start_byte(right)), Byte(ts_node_end_byte(right))};
      list.bare = SymOf(right) == Sym::kExpressionList;
      for (size_t i = 0; i < items.size(); ++i) list.entries.push_back({spans[i], items[i]});
      all_lists_->push_back(std::move(list));
    }
    if (SymOf(assign) == Sym::kAssignment) {
      all_dynamic_ = !literal;
      table_->all = literal ? std::optional(std::move(items)) : std::nullopt;
    } else if (!literal) {
      all_dynamic_ = true;
      table_->all.reset();
    } else if (table_->all && !all_dynamic_) {
      for (auto& s : items) table_->all->push_back(std::move(s));
    }
  }

  // `__all__.extend([...])` and `__all__.append("x")`.
  void TrackAllCall(TSNode call) {
    TSNode fn = ts_node_child_by_field_id(call, impl_.f_function);
    if (ts_node_is_null(fn) || SymOf(fn) != Sym::kAttribute) return;
    TSNode obj = ts_node_child_by_field_id(fn, impl_.f_object);
    TSNode attr = ts_node_child_by_field_id(fn, impl_.f_attribute);
    if (ts_node_is_null(obj) || Text(obj) != "__all__" || ts_node_is_null(attr)) return;
    if (!table_->all || all_dynamic_) return;
    TSNode args = ts_node_child_by_field_id(call, impl_.f_arguments);
    if (ts_node_is_null(args) || ts_node_named_child_count(args) != 1) return;
    TSNode arg = ts_node_named_child(args, 0);
    std::vector<std::string> items;
    bool ok = Text(attr) == "extend"   ? LiteralStrings(arg, &items)
              : Text(attr) == "append" ? LiteralString(arg, &items)
                                       : true;
    if (!ok) {
      all_dynamic_ = true;
      table_->all.reset();
      return;
    }
    for (auto& s : items) table_->all->push_back(std::move(s));
  }

  bool LiteralString(TSNode n, std::vector<std::string>* out) const {
    if (SymOf(n) != Sym::kString) return false;
    for (Children c(n); c.valid(); c.Next()) {
      if (SymOf(c.node()) == Sym::kInterpolation) return false;
    }
    auto value = PlainStringValue(n);
    if (!value) return false;
    out->push_back(std::move(*value));
    return true;
  }

  // A list or tuple (parenthesised or not) of string literals, or a `+` of such; `spans`
  // (optional) gets each literal's bytes.
  bool LiteralStrings(TSNode n, std::vector<std::string>* out,
                      std::vector<std::pair<int64_t, int64_t>>* spans = nullptr) const {
    Sym kind = SymOf(n);
    if (kind == Sym::kParenthesizedExpression && ts_node_named_child_count(n) == 1) {
      return LiteralStrings(ts_node_named_child(n, 0), out, spans);
    }
    if (kind == Sym::kBinaryOperator) {
      TSNode op = ts_node_child_by_field_id(n, impl_.f_operator);
      return !ts_node_is_null(op) && Text(op) == "+" &&
             LiteralStrings(ts_node_child_by_field_id(n, impl_.f_left), out, spans) &&
             LiteralStrings(ts_node_child_by_field_id(n, impl_.f_right), out, spans);
    }
    if (kind != Sym::kList && kind != Sym::kTuple && kind != Sym::kExpressionList) return false;
    for (Children c(n); c.valid(); c.Next()) {
      TSNode item = c.node();
      if (!ts_node_is_named(item) || SymOf(item) == Sym::kComment) continue;
      if (!LiteralString(item, out)) return false;
      if (spans) spans->emplace_back(Byte(ts_node_start_byte(item)), Byte(ts_node_end_byte(item)));
    }
    return true;
  }

  // The innermost ERROR and MISSING nodes, in source order. An ERROR node that wraps
  // well-formed statements around a nested error (tree-sitter's recovery often makes the
  // whole module one) is not reported itself: its nested errors are, at their own lines.
  void CollectErrors(TSNode node) {
    constexpr size_t kMaxErrors = 100;
    if (table_->parse_errors.size() >= kMaxErrors) return;
    if (ts_node_is_missing(node)) {
      AddError(ts_node_start_point(node), "missing " + std::string(ts_node_type(node)));
      return;
    }
    bool nested = false;
    for (Children c(node); c.valid(); c.Next()) {
      if (ts_node_has_error(c.node())) {
        nested = true;
        CollectErrors(c.node());
      }
    }
    if (!nested && ts_node_symbol(node) == PythonParser::Impl::kErrorSymbol) {
      std::string_view text = Text(node);
      text = text.substr(0, std::min<size_t>(text.find_first_of("\r\n"), 40));
      AddError(ts_node_start_point(node), "syntax error at '" + std::string(text) + "'");
    }
  }

  void AddError(TSPoint p, std::string message) {
    for (char& c : message) {
      if (static_cast<unsigned char>(c) < 0x20) c = ' ';
    }
    int column = static_cast<int>(p.column) + 1 + (p.row == 0 ? static_cast<int>(offset_) : 0);
    table_->parse_errors.push_back(ParseError{Line(p), column, std::move(message)});
  }

  const PythonParser::Impl& impl_;
  std::string_view src_;  // the file's bytes after a BOM
  int64_t offset_;        // bytes skipped before src_ (a BOM)
  bool latin1_;
  FileTable* table_;
  std::vector<PythonParser::AllList>* all_lists_;  // AllLists: the __all__ literals found
  std::unordered_map<std::string, int> qualname_count_;
  std::vector<TSNode> entity_nodes_;  // parallel to table_->entities
  bool all_dynamic_ = false;
};

// PEP 263: the encoding named by a coding declaration in a comment on line 1 or 2,
// lower-cased with '_' as '-'; "" when there is none.
std::string CodingCookie(std::string_view src) {
  for (int line = 0; line < 2 && !src.empty(); ++line) {
    size_t nl = src.find_first_of("\r\n");
    std::string_view text = src.substr(0, nl);
    size_t hash = text.find('#');
    size_t c = hash == std::string_view::npos ? hash : text.find("coding", hash);
    if (c != std::string_view::npos && c + 6 < text.size() &&
        (text[c + 6] == ':' || text[c + 6] == '=')) {
      std::string name;
      for (size_t i = text.find_first_not_of(" \t", c + 7); i < text.size(); ++i) {
        char ch = text[i];
        if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '-' && ch != '_' && ch != '.') {
          break;
        }
        name.push_back(ch == '_' ? '-' : static_cast<char>(std::tolower(ch)));
      }
      return name;
    }
    if (nl == std::string_view::npos) break;
    src.remove_prefix(src.substr(nl, 2) == "\r\n" ? nl + 2 : nl + 1);
  }
  return "";
}

// CPython's tokenizer treats these names as Latin-1 (get_normal_name in tokenizer.c).
bool IsLatin1Coding(const std::string& name) {
  for (const char* prefix : {"latin-1", "iso-8859-1", "iso-latin-1"}) {
    std::string p = prefix;
    if (name == p || name.rfind(p + "-", 0) == 0) return true;
  }
  return name == "latin1" || name == "l1" || name == "iso8859-1";
}

// The bytes tree-sitter parses: the same length as the file (so every offset and column
// stays exact), with lone CRs (line breaks for CPython) made LFs and bytes that are not
// UTF-8 made 'x' (tree-sitter would otherwise see errors where CPython sees a character).
// Empty when the file needs no change, which is the common case.
std::string ParseCopy(std::string_view src) {
  bool lone_cr = false;
  for (size_t i = src.find('\r'); i != std::string_view::npos; i = src.find('\r', i + 1)) {
    if (i + 1 == src.size() || src[i + 1] != '\n') {
      lone_cr = true;
      break;
    }
  }
  size_t bad = util::FindInvalidUtf8(src);
  if (!lone_cr && bad == std::string_view::npos) return "";
  std::string copy(src);
  for (size_t i = 0; i < copy.size(); ++i) {
    if (copy[i] == '\r' && (i + 1 == copy.size() || copy[i + 1] != '\n')) copy[i] = '\n';
  }
  for (size_t i = bad; i < copy.size();) {
    if (static_cast<unsigned char>(copy[i]) < 0x80) {
      ++i;
    } else if (size_t len = util::Utf8SequenceLength(copy, i); len > 0) {
      i += len;
    } else {
      copy[i++] = 'x';
    }
  }
  return copy;
}

void CheckEncoding(std::string_view source, FileTable* table) {
  size_t bad = util::FindInvalidUtf8(source);
  if (bad == std::string_view::npos || !CodingCookie(source).empty()) return;
  std::string_view before = source.substr(0, bad);
  int line = 1 + static_cast<int>(std::count(before.begin(), before.end(), '\n'));
  size_t nl = before.rfind('\n');
  int column = static_cast<int>(nl == std::string_view::npos ? bad + 1 : bad - nl);
  static const char kHex[] = "0123456789ABCDEF";
  unsigned char byte = static_cast<unsigned char>(source[bad]);
  std::string message = "invalid UTF-8 byte 0x";
  message += kHex[byte >> 4];
  message += kHex[byte & 15];
  message += " and no coding declaration";
  table->parse_errors.push_back(ParseError{line, column, std::move(message)});
}

// How deep brackets nest in `source` at most (those in strings and comments too, and those
// never closed): a linear scan, before tree-sitter sees the bytes.
size_t BracketDepth(std::string_view source) {
  size_t depth = 0, most = 0;
  for (char c : source) {
    if (c == '(' || c == '[' || c == '{') {
      most = std::max(most, ++depth);
    } else if ((c == ')' || c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return most;
}

// How deep the tree goes (at most `cap` + 1 is counted), walked without recursion.
uint32_t TreeDepth(TSNode root, uint32_t cap) {
  TSTreeCursor cursor = ts_tree_cursor_new(root);
  uint32_t depth = 0, most = 0;
  for (bool more = true; more && most <= cap;) {
    if (ts_tree_cursor_goto_first_child(&cursor)) {
      most = std::max(most, ++depth);
      continue;
    }
    while (!ts_tree_cursor_goto_next_sibling(&cursor)) {
      if (!ts_tree_cursor_goto_parent(&cursor)) {
        more = false;
        break;
      }
      --depth;
    }
  }
  ts_tree_cursor_delete(&cursor);
  return most;
}

// Source nested past these is refused: tree-sitter 0.20.7 corrupts its heap past 65,535
// unclosed brackets, and the walks over the tree recurse once per level (100,000 nested
// lists overflowed fbkit's stack: red team round 12). CPython refuses far less (200 nested
// brackets), so no real file comes near.
constexpr size_t kMaxBracketDepth = 5000;
constexpr uint32_t kMaxTreeDepth = 3000;

// Parses a file's bytes after any UTF-8 BOM (whose length goes to *offset: the tree's
// offsets index the text after it). nullptr when tree-sitter gives up (parser reset) or the
// source nests too deep (`why`, when given, says which).
TSTree* ParseTree(TSParser* parser, std::string_view source, int64_t* offset,
                  std::string* why = nullptr) {
  *offset = source.substr(0, 3) == "\xEF\xBB\xBF" ? 3 : 0;
  std::string_view src = source.substr(static_cast<size_t>(*offset));
  if (BracketDepth(src) > kMaxBracketDepth) {
    if (why) *why = "brackets nest more than " + std::to_string(kMaxBracketDepth) + " deep";
    return nullptr;
  }
  std::string copy = ParseCopy(src);
  std::string_view parsed = copy.empty() ? src : std::string_view(copy);
  TSTree* tree =
      ts_parser_parse_string(parser, nullptr, parsed.data(), static_cast<uint32_t>(parsed.size()));
  if (tree == nullptr) {
    ts_parser_reset(parser);
    if (why) *why = "tree-sitter could not parse the file";
    return nullptr;
  }
  if (TreeDepth(ts_tree_root_node(tree), kMaxTreeDepth) > kMaxTreeDepth) {
    ts_tree_delete(tree);
    if (why) *why = "its syntax nests more than " + std::to_string(kMaxTreeDepth) + " levels deep";
    return nullptr;
  }
  return tree;
}

}  // namespace

util::Expected<std::unique_ptr<PythonParser>> PythonParser::Create() {
  auto impl = std::make_unique<Impl>();
  const TSLanguage* lang = tree_sitter_python();
  impl->parser = ts_parser_new();
  if (!ts_parser_set_language(impl->parser, lang)) {
    return util::Error{"tree-sitter-python grammar has ABI version " +
                       std::to_string(ts_language_version(lang)) +
                       ", but the tree-sitter runtime accepts " +
                       std::to_string(TREE_SITTER_MIN_COMPATIBLE_LANGUAGE_VERSION) + " to " +
                       std::to_string(TREE_SITTER_LANGUAGE_VERSION)};
  }
  const auto& names = SymbolNames();
  uint32_t count = ts_language_symbol_count(lang);
  impl->sym_of.assign(count, Sym::kOther);
  for (uint32_t s = 0; s < count; ++s) {
    auto it = names.find(ts_language_symbol_name(lang, static_cast<TSSymbol>(s)));
    if (it == names.end()) continue;
    // Only named symbols: an anonymous token may share a name with nothing we need, but
    // must never be taken for a statement.
    if (ts_language_symbol_type(lang, static_cast<TSSymbol>(s)) == TSSymbolTypeRegular) {
      impl->sym_of[s] = it->second;
    }
  }
  auto field = [&](const char* name) {
    return ts_language_field_id_for_name(lang, name, static_cast<uint32_t>(strlen(name)));
  };
  impl->f_name = field("name");
  impl->f_body = field("body");
  impl->f_module_name = field("module_name");
  impl->f_alias = field("alias");
  impl->f_left = field("left");
  impl->f_right = field("right");
  impl->f_definition = field("definition");
  impl->f_function = field("function");
  impl->f_object = field("object");
  impl->f_attribute = field("attribute");
  impl->f_arguments = field("arguments");
  impl->f_operator = field("operator");
  impl->f_value = field("value");
  impl->f_type = field("type");
  impl->f_parameters = field("parameters");
  return std::unique_ptr<PythonParser>(new PythonParser(std::move(impl)));
}

PythonParser::PythonParser(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
PythonParser::~PythonParser() = default;

FileTable PythonParser::Parse(std::string_view path, std::string_view module,
                              std::string_view source, bool references) {
  FileTable table;
  table.path = std::string(path);
  table.module = std::string(module);
  CheckEncoding(source, &table);
  int64_t offset = 0;
  std::string why;
  TSTree* tree = ParseTree(impl_->parser, source, &offset, &why);
  if (tree == nullptr) {
    table.parse_errors.push_back(ParseError{1, 1, why});
    return table;
  }
  std::string_view src = source.substr(static_cast<size_t>(offset));
  Walker walker(*impl_, src, offset, IsLatin1Coding(CodingCookie(source)), &table);
  walker.Run(ts_tree_root_node(tree), references);
  ts_tree_delete(tree);
  std::stable_sort(table.parse_errors.begin(), table.parse_errors.end(),
                   [](const ParseError& a, const ParseError& b) {
                     return a.line != b.line ? a.line < b.line : a.column < b.column;
                   });
  return table;
}

std::vector<PythonParser::Block> PythonParser::Blocks(std::string_view source) {
  std::vector<Block> blocks;
  int64_t offset = 0;
  TSTree* tree = ParseTree(impl_->parser, source, &offset);
  if (tree == nullptr) return blocks;
  std::vector<TSNode> stack = {ts_tree_root_node(tree)};
  while (!stack.empty()) {
    TSNode node = stack.back();
    stack.pop_back();
    bool is_block = impl_->SymOf(node) == Sym::kBlock;
    Block block;
    if (is_block) {
      TSNode owner = ts_node_parent(node);
      block.owner_start = offset + (ts_node_is_null(owner) ? 0 : ts_node_start_byte(owner));
    }
    for (Children c(node); c.valid(); c.Next()) {
      TSNode child = c.node();
      // tree-sitter's recovery may leave a block empty (a body of comments only), no error.
      if (ts_node_child_count(child) > 0 || impl_->SymOf(child) == Sym::kBlock) {
        stack.push_back(child);
      }
      if (is_block && ts_node_is_named(child) && impl_->SymOf(child) != Sym::kComment) {
        block.statements.emplace_back(offset + ts_node_start_byte(child),
                                      offset + ts_node_end_byte(impl_->LastToken(child)));
      }
    }
    if (is_block) blocks.push_back(std::move(block));
  }
  ts_tree_delete(tree);
  std::sort(blocks.begin(), blocks.end(),
            [](const Block& a, const Block& b) { return a.owner_start < b.owner_start; });
  return blocks;
}

std::vector<PythonParser::AllList> PythonParser::AllLists(std::string_view source) {
  std::vector<AllList> lists;
  int64_t offset = 0;
  TSTree* tree = ParseTree(impl_->parser, source, &offset);
  if (tree == nullptr) return lists;
  FileTable scratch;
  Walker walker(*impl_, source.substr(static_cast<size_t>(offset)), offset,
                IsLatin1Coding(CodingCookie(source)), &scratch, &lists);
  walker.Run(ts_tree_root_node(tree), false);
  ts_tree_delete(tree);
  return lists;
}

std::string PythonParser::CodeOnly(std::string_view source) {
  std::string out(source);
  int64_t offset = 0;
  TSTree* tree = ParseTree(impl_->parser, source, &offset);
  if (tree == nullptr) return out;
  auto blank = [&](TSNode n) {
    for (size_t i = static_cast<size_t>(offset) + ts_node_start_byte(n);
         i < static_cast<size_t>(offset) + ts_node_end_byte(n) && i < out.size(); ++i) {
      if (out[i] != '\n') out[i] = ' ';
    }
  };
  std::vector<TSNode> stack = {ts_tree_root_node(tree)};
  while (!stack.empty()) {
    TSNode node = stack.back();
    stack.pop_back();
    Sym sym = impl_->SymOf(node);
    if (sym == Sym::kStringContent || (sym == Sym::kComment && ts_node_type(node) == std::string_view("comment"))) {
      blank(node);
      continue;
    }
    for (Children c(node); c.valid(); c.Next()) stack.push_back(c.node());
  }
  ts_tree_delete(tree);
  return out;
}

std::vector<std::pair<int64_t, int64_t>> PythonParser::StringTexts(std::string_view source,
                                                                      bool want_bytes) {
  std::vector<std::pair<int64_t, int64_t>> spans;
  int64_t offset = 0;
  TSTree* tree = ParseTree(impl_->parser, source, &offset);
  if (tree == nullptr) return spans;
  std::string_view src = source.substr(static_cast<size_t>(offset));
  std::vector<TSNode> stack = {ts_tree_root_node(tree)};
  while (!stack.empty()) {
    TSNode node = stack.back();
    stack.pop_back();
    if (impl_->SymOf(node) != Sym::kString) {
      for (Children c(node); c.valid(); c.Next()) {
        if (ts_node_child_count(c.node()) > 0) stack.push_back(c.node());
      }
      continue;
    }
    bool bytes = false;
    for (Children c(node); c.valid(); c.Next()) {
      TSNode child = c.node();
      Sym sym = impl_->SymOf(child);
      if (sym == Sym::kStringStart) {
        std::string_view prefix = src.substr(ts_node_start_byte(child),
                                             ts_node_end_byte(child) - ts_node_start_byte(child));
        bytes = prefix.find_first_of("bB") != std::string_view::npos;
      } else if (sym == Sym::kStringContent && bytes == want_bytes) {
        spans.emplace_back(offset + ts_node_start_byte(child), offset + ts_node_end_byte(child));
      } else if (sym == Sym::kInterpolation) {
        stack.push_back(child);  // strings nested in the expression
      }
    }
  }
  ts_tree_delete(tree);
  std::sort(spans.begin(), spans.end());
  return spans;
}

const char* EntityKindName(EntityKind kind) {
  switch (kind) {
    case EntityKind::kModule:
      return "module";
    case EntityKind::kClass:
      return "class";
    case EntityKind::kFunction:
      return "function";
    case EntityKind::kMethod:
      return "method";
  }
  return "module";
}

}  // namespace fbkit::parser
