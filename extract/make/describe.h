// A docstring for an interface whose original has none, derived from its code and from the
// types the traced tests passed and got back, the same for the same inputs: its parameters
// (kind, annotation, default, observed types), what it returns or yields (annotation,
// observed types, the expressions it returns), the exceptions it raises, the attributes it
// sets, the functions it defines inside and the repository names it uses; never a line that
// only restates its name or kind. Used in problem statements unless a model (--llm-cmd)
// writes one.
#pragma once

#include <string>
#include <vector>

#include "extract/make/repo.h"
#include "tracer/trace.h"

namespace fbkit::extract::make {

struct Parameter {
  std::string name;        // without stars
  std::string kind;        // positional-only, positional or keyword, keyword-only, *args, **kwargs
  std::string annotation;  // as written, or ""
  std::string default_value;  // as written, or ""
};

// The parameters of a signature as written ("(a, /, b: int = 1, *c, d, **e) -> X"), and its
// return annotation ("" when none).
std::vector<Parameter> ParseParameters(const std::string& signature, std::string* returns);

// The types `observed` holds for an entity (matched by file, first line and name), or null.
const tracer::ObservedTypes* ObservedFor(const Repo& repo, Ent entity,
                                         const tracer::TypeMap* observed);

// The docstring text (no quotes) for an entity, never empty; `observed`: the types the F2P
// tests' calls showed, `elsewhere`: those other tests' calls showed, said as such where the
// F2P tests showed none (null: none known).
std::string DescribeFromCode(const Repo& repo, Ent entity,
                             const tracer::TypeMap* observed = nullptr,
                             const tracer::TypeMap* elsewhere = nullptr);

}  // namespace fbkit::extract::make
