// A docstring for an interface whose original has none, derived from its code alone and the
// same for the same code: what it is, its parameters (kind, annotation, default), what it
// returns or yields, the exceptions it raises, the attributes it sets and the repository
// names it uses. Used in problem statements unless a model (--llm-cmd) writes one.
#pragma once

#include <string>
#include <vector>

#include "extract/make/repo.h"

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

// The docstring text (no quotes) for an entity, never empty.
std::string DescribeFromCode(const Repo& repo, Ent entity);

}  // namespace fbkit::extract::make
