#include "jaxprof/formats/nsys_jax/nsys_gpu_ranges.h"

#include <fmt/format.h>

#include <charconv>
#include <initializer_list>
#include <unordered_map>

#include "jaxprof/common/error.h"
#include "jaxprof/model/time_range.h"

namespace jaxprof {

std::string_view nvtx_field(std::string_view text, std::string_view key) {
  size_t at = 0;
  while ((at = text.find(key, at)) != std::string_view::npos) {
    if (at > 0 && (text[at - 1] == '#' || text[at - 1] == ',')) {
      size_t begin = at + key.size();
      size_t end = text.find_first_of(",#", begin);
      return text.substr(begin, end == std::string_view::npos ? text.size() - begin : end - begin);
    }
    at += key.size();
  }
  return {};
}

bool parse_nvtx_int(std::string_view s, int64_t& out) {
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size();
}

namespace {

// One table column read as integers, whatever its physical type (range ids are doubles in the
// older layout because pandas stored them next to NaNs).
struct IntColumn {
  ParquetColumn c;
  std::string name;
  bool present(size_t i) const { return i < c.size() && !c.is_null(i); }
  // Row i (present); a double no int64 holds (NaN, an infinity, beyond 2^63) is bad input.
  int64_t at(size_t i, const std::string& file) const {
    if (c.type != ParquetType::kFloat && c.type != ParquetType::kDouble) return c.ints[i];
    int64_t v;
    if (!double_to_int64(c.doubles[i], v))
      throw InputError(file, "out of range: column '" + name + "' row " + std::to_string(i) +
                                 " holds " + fmt::format("{}", c.doubles[i]) +
                                 ", which is no 64-bit integer");
    return v;
  }
};

ParquetFile open_parquet(const ZipArchive& zip, const ZipEntry& entry,
                         std::vector<uint8_t>& storage, std::string_view& bytes) {
  bytes = zip.read(entry, storage);
  return ParquetFile(bytes, zip.member_path(entry));
}

IntColumn int_column(const ParquetFile& f, std::initializer_list<std::string_view> names,
                     bool required = true) {
  for (std::string_view n : names) {
    int c = f.find(n);
    if (c < 0) continue;
    ParquetType t = f.columns()[c].type;
    if (t == ParquetType::kByteArray || t == ParquetType::kFixedLenByteArray) continue;
    return IntColumn{f.read(c), std::string(n)};
  }
  if (required) throw InputError(f.name(), "missing column '" + std::string(*names.begin()) + "'");
  return {};
}

ParquetColumn string_column(const ParquetFile& f, std::string_view name) {
  int c = f.find(name);
  if (c < 0 || f.columns()[c].type != ParquetType::kByteArray)
    throw InputError(f.name(), "missing text column '" + std::string(name) + "'");
  return f.read(c);
}

// The ranges of the trace's rows, their parents resolved.
void read_ranges(const ParquetFile& f, NsysGpuTrace& t) {
  const std::string& file = t.file;
  // Two layouts: the older one (2024.4 and before) with "Name", "Projected Start/Duration" and a
  // "TSL:" domain prefix on every name; the newer with "Text", "Start", "End", no prefix.
  bool newer = f.find("Text") >= 0 && f.find("Start") >= 0 && f.find("End") >= 0;
  t.names = string_column(f, newer ? "Text" : "Name");
  const ParquetColumn& names = t.names;
  IntColumn start = int_column(f, {newer ? "Start" : "Projected Start"});
  IntColumn dur_or_end = int_column(f, {newer ? "End" : "Projected Duration"});
  IntColumn ids = int_column(f, {newer ? "Range ID" : "RangeId"});
  IntColumn parents = int_column(f, {newer ? "Parent ID" : "ParentId"});
  IntColumn pid = int_column(f, {"PID"}), tid = int_column(f, {"TID"});
  const std::string prefix = newer ? "" : "TSL:";
  const std::string module_prefix = prefix + "XlaModule:";
  t.thunk_prefix = prefix + "Thunk:";
  const std::string& thunk_prefix = t.thunk_prefix;

  size_t n = names.size();
  for (const IntColumn* c : {&start, &dur_or_end, &ids, &parents, &pid, &tid})
    if (c->c.size() != n) throw InputError(file, "columns of different lengths");
  std::vector<NsysRange>& ranges = t.ranges;
  ranges.reserve(n);
  std::unordered_map<int64_t, int32_t> row_of;
  row_of.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    // Rows without a range id are not NVTX ranges (the older layout has one such summary row).
    if (!ids.present(i) || names.is_null(i) || !start.present(i) || !dur_or_end.present(i))
      continue;
    NsysRange& r = ranges.emplace_back();
    r.name = names.strings[i];
    r.start_ns = start.at(i, file);
    r.duration_ns = dur_or_end.at(i, file);
    if (newer && !checked_sub(r.duration_ns, r.start_ns, r.duration_ns))
      throw InputError(file, "out of range: row " + std::to_string(i) + " ends at " +
                                 std::to_string(dur_or_end.at(i, file)) + " ns, starts at " +
                                 std::to_string(r.start_ns) + " ns");
    if (r.duration_ns < 0) throw InputError(file, "range with a negative duration");
    r.range_id = ids.at(i, file);
    r.has_parent = parents.present(i);
    r.pid = pid.present(i) ? pid.at(i, file) : 0;
    r.tid = tid.present(i) ? tid.at(i, file) : 0;
    r.kind = r.name.starts_with(module_prefix)  ? NsysRangeKind::kModule
             : r.name.starts_with(thunk_prefix) ? NsysRangeKind::kThunk
                                                : NsysRangeKind::kOther;
    if (!row_of.emplace(r.range_id, static_cast<int32_t>(ranges.size() - 1)).second)
      throw InputError(file, "duplicate range id " + std::to_string(r.range_id) +
                                 " (Nsight Systems 2024.5/2024.6 with CUDA graphs enabled?)");
  }
  // Resolve parents now that every id is known (a parent may come after its child).
  size_t k = 0;
  for (size_t i = 0; i < n; ++i) {
    if (!ids.present(i) || names.is_null(i) || !start.present(i) || !dur_or_end.present(i))
      continue;
    NsysRange& r = ranges[k++];
    if (!r.has_parent) continue;
    auto it = row_of.find(parents.at(i, file));
    r.parent = it == row_of.end() ? -1 : it->second;
  }
}

// Each thunk's module: walk up through thunks and dropped ranges (NCCL) to the nearest module;
// a thunk met on the way has a child thunk, so it is not innermost. Returns the thunks without
// one.
size_t find_modules(std::vector<NsysRange>& ranges) {
  size_t orphans = 0;
  for (NsysRange& r : ranges) {
    if (r.kind != NsysRangeKind::kThunk) continue;
    int32_t at = r.parent;
    for (size_t steps = 0; at >= 0 && steps <= ranges.size(); ++steps) {
      NsysRange& up = ranges[at];
      if (up.kind == NsysRangeKind::kModule) {
        r.module = at;
        break;
      }
      if (up.kind == NsysRangeKind::kThunk) up.has_child_thunk = true;
      at = up.parent;
    }
    if (r.module < 0) ++orphans;
  }
  return orphans;
}

}  // namespace

void read_gpu_trace(const ZipArchive& zip, const ZipEntry& entry, NsysGpuTrace& t) {
  std::string_view bytes;
  ParquetFile f = open_parquet(zip, entry, t.storage, bytes);
  t.file = f.name();
  read_ranges(f, t);
  t.orphans = find_modules(t.ranges);
}

NsysThreads read_thread_metadata(const ZipArchive& zip, const ZipEntry& entry) {
  NsysThreads out;
  std::vector<uint8_t> storage;
  std::string_view bytes;
  ParquetFile tf = open_parquet(zip, entry, storage, bytes);
  ParquetColumn names = string_column(tf, "Name");
  IntColumn pid = int_column(tf, {"PID"}), tid = int_column(tf, {"TID"});
  for (size_t i = 0; i < names.size(); ++i) {
    if (names.is_null(i) || !pid.present(i) || !tid.present(i)) continue;
    std::string_view n = names.strings[i];
    std::pair<int64_t, int64_t> thread{pid.at(i, tf.name()), tid.at(i, tf.name())};
    out.names.emplace(thread, std::string(n));
    if (!n.starts_with("XlaLauncher:#")) continue;
    int64_t g;
    if (!parse_nvtx_int(nvtx_field(n, "global="), g)) continue;
    out.launcher_device[thread] = g;
    if (out.first_launcher_device < 0) out.first_launcher_device = g;
  }
  return out;
}

}  // namespace jaxprof
