#include "extract/infer/patch.h"

#include <algorithm>
#include <cstdlib>
#include <string_view>
#include <unordered_map>

#include "util/strings.h"
#include "util/utf8.h"

namespace fbkit::extract::infer {

namespace {

uint64_t Count(std::string_view digits) {
  return std::strtoull(std::string(digits).c_str(), nullptr, 10);
}

}  // namespace

util::Expected<std::vector<ChangedFile>> ParseChangedFiles(std::string_view listing) {
  std::vector<std::string_view> fields = util::Records(listing, '\0');
  std::unordered_map<std::string_view, std::vector<std::string>> raw;  // path -> its record
  std::vector<std::string_view> rows;                                  // numstat's
  for (size_t i = 0; i < fields.size(); ++i) {
    if (!fields[i].starts_with(":")) {
      rows.push_back(fields[i]);
    } else if (i + 1 < fields.size()) {  // ":OLDMODE NEWMODE OLDBLOB NEWBLOB STATUS", the path
      raw[fields[i + 1]] = util::Split(std::string(fields[i].substr(1)), ' ');
      ++i;
    }
  }
  std::vector<ChangedFile> out;
  for (std::string_view row : rows) {
    size_t t1 = row.find('\t'), t2 = row.find('\t', t1 + 1);
    if (t1 == std::string_view::npos || t2 == std::string_view::npos) continue;
    ChangedFile f;
    f.path = std::string(row.substr(t2 + 1));
    auto record = raw.find(f.path);
    if (record == raw.end() || record->second.size() < 4) {
      return util::Error{"git listed no start for " + f.path};
    }
    f.old_mode = record->second[0];
    f.old_blob = record->second[2];
    f.new_blob = record->second[3];
    f.binary = row.starts_with("-\t-\t");
    f.lines = Count(row.substr(0, t1)) + Count(row.substr(t1 + 1, t2 - t1 - 1));
    f.not_utf8 = util::FindInvalidUtf8(f.path) != std::string::npos;
    out.push_back(std::move(f));
  }
  return out;
}

uint64_t PatchCost(const ChangedFile& f) {
  uint64_t quoted = 2;
  for (unsigned char c : f.path) quoted += c < 0x20 || c == 0x7f || c == '"' || c == '\\' ? 4 : 1;
  return f.old_bytes + f.new_bytes + 4 * quoted + 160 + f.lines;
}

std::vector<LeftOut> ChooseLeftOut(const std::vector<ChangedFile>& files, int64_t max_kb,
                                   uint64_t max_total) {
  std::vector<LeftOut> out;
  uint64_t total = 0;  // the patch so far, in git's order of paths
  for (size_t i = 0; i < files.size(); ++i) {
    const ChangedFile& f = files[i];
    int64_t kb = static_cast<int64_t>(std::max(f.old_bytes, f.new_bytes) / 1024);
    uint64_t cost = PatchCost(f);
    std::string why = f.binary   ? "binary"
                      : f.not_utf8 ? kNotUtf8
                      : kb > max_kb ? std::to_string(kb) + " KiB (over the limit)"
                      : total + cost > max_total
                          ? std::to_string(kb) + " KiB (past the " +
                                std::to_string(max_total >> 20) + " MiB the patch may have)"
                          : "";
    if (why.empty()) {
      total += cost;
    } else {
      out.push_back({i, std::move(why)});
    }
  }
  return out;
}

std::string RestoreInput(const std::vector<ChangedFile>& files, const std::vector<LeftOut>& out) {
  std::string input;
  for (const LeftOut& o : out) {
    const ChangedFile& f = files[o.index];
    input += f.old_mode + " " + f.old_blob + "\t" + f.path + '\0';
  }
  return input;
}

}  // namespace fbkit::extract::infer
