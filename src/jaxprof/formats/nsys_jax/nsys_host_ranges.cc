#include "jaxprof/formats/nsys_jax/nsys_host_ranges.h"

#include <charconv>
#include <initializer_list>

#include "jaxprof/common/error.h"
#include "jaxprof/io/csv.h"
#include "jaxprof/io/parquet.h"

namespace jaxprof {

namespace {

int64_t to_int(std::string_view s, const std::string& name, const char* what) {
  int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size())
    throw InputError(name, std::string("bad ") + what + " '" + std::string(s) + "'");
  return v;
}

int column(const CsvTable& t, std::initializer_list<std::string_view> names,
           const std::string& name) {
  for (std::string_view n : names)
    if (int c = t.find(n); c >= 0) return c;
  throw InputError(name, "missing column '" + std::string(*names.begin()) + "'");
}

}  // namespace

std::vector<HostRange> parse_pushpop_csv(std::string_view text, const std::string& name) {
  CsvTable t(text, name);
  int start = column(t, {"Start (ns)", "Start"}, name);
  int end = column(t, {"End (ns)", "End"}, name);
  int text_col = column(t, {"Name", "Text"}, name);
  int pid = column(t, {"PID"}, name), tid = column(t, {"TID"}, name);
  std::vector<HostRange> out;
  out.reserve(t.rows());
  for (size_t r = 0; r < t.rows(); ++r) {
    HostRange& h = out.emplace_back();
    h.start_ns = to_int(t.at(r, start), name, "start");
    h.end_ns = to_int(t.at(r, end), name, "end");
    if (h.end_ns < h.start_ns) throw InputError(name, "range ending before it starts");
    h.pid = to_int(t.at(r, pid), name, "PID");
    h.tid = to_int(t.at(r, tid), name, "TID");
    h.name = t.at(r, text_col);
  }
  return out;
}

std::vector<HostRange> parse_pushpop_parquet(std::string_view bytes, const std::string& name,
                                             std::vector<ParquetColumn>& keep) {
  ParquetFile f(bytes, name);
  auto col = [&](std::initializer_list<std::string_view> names) -> ParquetColumn& {
    for (std::string_view n : names)
      if (int c = f.find(n); c >= 0) return keep.emplace_back(f.read(c));
    throw InputError(name, "missing column '" + std::string(*names.begin()) + "'");
  };
  keep.reserve(keep.size() + 5);  // the references below must not move
  ParquetColumn& start = col({"Start (ns)", "Start"});
  ParquetColumn& end = col({"End (ns)", "End"});
  ParquetColumn& text = col({"Name", "Text"});
  ParquetColumn& pid = col({"PID"});
  ParquetColumn& tid = col({"TID"});
  size_t n = text.size();
  for (const ParquetColumn* c : {&start, &end, &pid, &tid})
    if (c->size() != n || c->ints.size() != n)
      throw InputError(name, "start, end, PID and TID must be integer columns of one length");
  if (text.strings.size() != n) throw InputError(name, "the range name column is not text");
  std::vector<HostRange> out;
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    if (text.is_null(i) || start.is_null(i) || end.is_null(i)) continue;
    HostRange& h = out.emplace_back();
    h.start_ns = start.ints[i];
    h.end_ns = end.ints[i];
    if (h.end_ns < h.start_ns) throw InputError(name, "range ending before it starts");
    h.pid = pid.is_null(i) ? 0 : pid.ints[i];
    h.tid = tid.is_null(i) ? 0 : tid.ints[i];
    h.name = text.strings[i];
  }
  return out;
}

}  // namespace jaxprof
