#include "parser/entity_table.h"

#include <memory>
#include <mutex>

#include "parser/entities_json.h"
#include "parser/entity_cache.h"
#include "parser/python_parser.h"
#include "util/hash.h"
#include "util/parallel.h"

namespace fbkit::parser {
namespace {

// The outcome for one file, filled by whichever worker handles it.
struct Slot {
  std::unique_ptr<std::string> owned;  // the fragment when parsed in this run
  std::string_view fragment;
  std::vector<ParseError> parse_errors;
  std::optional<std::string> read_error;
  bool from_cache = false;
};

class Builder {
 public:
  Builder(util::Env& env, const EntitiesOptions& options, const SourceTree& tree)
      : env_(env), options_(options), tree_(tree), slots_(tree.files.size()) {
    if (options_.cache_dir) {
      cache_ = std::make_unique<EntityCache>(env_, *options_.cache_dir, options_.root,
                                             tree.files.size(),
                                             options_.references ? "references+reads" : "");
      cache_->Open();
    }
  }

  util::Status Run(const ProgressFn& progress) {
    int jobs = std::max(1, options_.jobs);
    parsers_.resize(static_cast<size_t>(jobs));
    std::mutex mu;
    size_t done = 0;
    util::ParallelFor(slots_.size(), jobs, [&](size_t i, int worker) {
      Handle(i, worker);
      if (progress) {
        std::lock_guard<std::mutex> lock(mu);
        progress(++done, slots_.size());
      }
    });
    if (parser_error_) return util::Error{*parser_error_};
    return util::Status::Ok();
  }

  EntitiesResult Finish() {
    EntitiesResult result;
    result.files = slots_.size();
    result.errors = tree_.errors;
    for (size_t i = 0; i < slots_.size(); ++i) {
      Slot& s = slots_[i];
      const std::string& path = tree_.files[i].path;
      if (s.read_error) {
        result.errors.push_back(FileError{path, *s.read_error});
        continue;
      }
      (s.from_cache ? result.cached : result.parsed)++;
      for (auto& e : s.parse_errors) {
        result.diagnostics.push_back(FileDiagnostic{path, e.line, e.column, std::move(e.message)});
      }
      result.fragments.push_back(s.fragment);
      if (s.owned) result.owned.push_back(std::move(s.owned));
    }
    std::sort(result.errors.begin(), result.errors.end(),
              [](const FileError& a, const FileError& b) { return a.path < b.path; });
    if (cache_) {
      util::Status s = cache_->Save();
      if (!s.ok()) result.warnings.push_back("cache not saved: " + s.error());
      result.pack = cache_->storage();
    }
    return result;
  }

 private:
  void Handle(size_t i, int worker) {
    const SourceFile& file = tree_.files[i];
    Slot& slot = slots_[i];
    std::string abs = util::JoinPath(options_.root, file.path);
    auto info = env_.Stat(abs, /*follow_symlinks=*/true);
    if (!info.ok()) {
      slot.read_error = RelativeToRoot(info.error(), options_.root);
      return;
    }
    if (info->size > options_.max_file_bytes) {
      slot.read_error = "file too large (" + std::to_string(info->size) + " bytes, limit " +
                        std::to_string(options_.max_file_bytes) + "): not parsed";
      return;
    }
    std::string sha;
    if (cache_) {
      if (const CachedFile* hit = cache_->LookupByStat(file.path, file.module, *info, &sha)) {
        return UseCached(i, *info, sha, *hit, /*unchanged=*/true);
      }
    }
    auto source = env_.ReadFile(abs);
    if (!source.ok()) {
      slot.read_error = RelativeToRoot(source.error(), options_.root);
      return;
    }
    sha = util::Sha256Hex(*source);
    if (cache_) {
      std::string key = cache_->Key(file.path, file.module, sha);
      if (const CachedFile* hit = cache_->LookupByKey(key)) {
        return UseCached(i, *info, sha, *hit, /*unchanged=*/false);
      }
    }
    Parse(i, worker, *source, sha);
    if (cache_) {
      cache_->Put(i, file.path, *info, sha, cache_->Key(file.path, file.module, sha),
                  CachedFile{slot.fragment, slot.parse_errors}, /*unchanged=*/false);
    }
  }

  void UseCached(size_t i, const util::FileInfo& info, const std::string& sha,
                 const CachedFile& hit, bool unchanged) {
    const SourceFile& file = tree_.files[i];
    cache_->Put(i, file.path, info, sha, cache_->Key(file.path, file.module, sha), hit,
                unchanged);
    Slot& slot = slots_[i];
    slot.fragment = hit.fragment;
    slot.parse_errors = hit.parse_errors;
    slot.from_cache = true;
  }

  void Parse(size_t i, int worker, const std::string& source, const std::string& sha) {
    auto& parser = parsers_[static_cast<size_t>(worker)];
    if (!parser) {
      auto created = PythonParser::Create();
      if (!created.ok()) {
        std::lock_guard<std::mutex> lock(error_mu_);
        parser_error_ = created.error();
        return;
      }
      parser = std::move(*created);
    }
    const SourceFile& file = tree_.files[i];
    FileTable table = parser->Parse(file.path, file.module, source, options_.references);
    table.sha256 = sha;
    Slot& slot = slots_[i];
    slot.owned = std::make_unique<std::string>();
    AppendFileTableJson(table, slot.owned.get());
    slot.fragment = *slot.owned;
    slot.parse_errors = std::move(table.parse_errors);
  }

  util::Env& env_;
  const EntitiesOptions& options_;
  const SourceTree& tree_;
  std::vector<Slot> slots_;
  std::unique_ptr<EntityCache> cache_;
  std::vector<std::unique_ptr<PythonParser>> parsers_;
  std::mutex error_mu_;
  std::optional<std::string> parser_error_;
};

}  // namespace

util::Expected<EntitiesResult> BuildEntities(util::Env& env, const EntitiesOptions& options,
                                             const ProgressFn& progress) {
  auto tree = FindPythonFiles(env, options.root, options.excludes);
  if (!tree.ok()) return tree.failure();
  Builder builder(env, options, *tree);
  util::Status s = builder.Run(progress);
  if (!s.ok()) return s.failure();
  return builder.Finish();
}

util::Expected<std::vector<FileTable>> FileTables(const EntitiesResult& result) {
  std::vector<FileTable> tables;
  tables.reserve(result.fragments.size());
  for (const auto& fragment : result.fragments) {
    auto t = ParseFileTableJson(fragment);
    if (!t.ok()) return t.failure();
    tables.push_back(std::move(*t));
  }
  return tables;
}

}  // namespace fbkit::parser
