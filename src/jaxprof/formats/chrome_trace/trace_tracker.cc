#include "jaxprof/formats/chrome_trace/trace_tracker.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <numeric>
#include <optional>
#include <tuple>
#include <utility>

#include "jaxprof/formats/chrome_trace/trace_parser.h"
#include "jaxprof/formats/line_order.h"
#include "jaxprof/io/base64.h"
#include "jaxprof/model/time_range.h"

namespace jaxprof::chrome_trace {

namespace {

// Picoseconds as the microseconds a trace writes ("12.5 us").
std::string micros(int64_t ps) {
  std::string whole = std::to_string(ps / 1000000);
  int64_t frac = ps % 1000000;
  if (frac == 0) return whole + " us";
  std::string f = std::to_string(frac < 0 ? -frac : frac);
  f.insert(0, 6 - f.size(), '0');
  while (f.back() == '0') f.pop_back();
  return (ps < 0 && whole == "0" ? "-" : "") + whole + "." + f + " us";
}

std::optional<int64_t> number_of(std::string_view key) {
  int64_t v = 0;
  auto [p, ec] = std::from_chars(key.data(), key.data() + key.size(), v);
  if (ec == std::errc() && p == key.data() + key.size()) return v;
  return std::nullopt;
}

// Planes in pid order, lines in tid order (numbers numerically, names after numbers).
auto order_key(const std::string& k) {
  auto n = number_of(k);
  return std::make_tuple(n ? 0 : 1, n.value_or(0), k);
}

}  // namespace

TraceTracker::TraceTracker(Profile& profile, std::string path, const Profile::FileSlots& slots)
    : p_(&profile),
      path_(std::move(path)),
      host_index_(slots.host),
      buffer_index_(slots.buffer),
      source_index_(slots.source),
      first_plane_(static_cast<uint32_t>(profile.planes.size())) {}

uint32_t TraceTracker::process_of(std::string_view pid) {
  auto it = process_index_.find(std::string(pid));
  if (it != process_index_.end()) return it->second;
  uint32_t index = static_cast<uint32_t>(processes_.size());
  processes_.push_back(Process{std::string(pid), {}});
  process_index_.emplace(std::string(pid), index);
  return index;
}

uint32_t TraceTracker::thread_of(std::string_view pid, std::string_view tid) {
  if (last_thread_ != UINT32_MAX && pid == last_pid_ && tid == last_tid_) return last_thread_;
  std::string key;
  key.reserve(pid.size() + tid.size() + 1);
  key.append(pid).push_back('\0');
  key.append(tid);
  auto it = thread_index_.find(key);
  uint32_t index;
  if (it != thread_index_.end()) {
    index = it->second;
  } else {
    index = static_cast<uint32_t>(threads_.size());
    threads_.push_back(Thread{process_of(pid), std::string(tid), {}});
    thread_index_.emplace(std::move(key), index);
  }
  last_pid_.assign(pid);
  last_tid_.assign(tid);
  last_thread_ = index;
  return index;
}

bool TraceTracker::derived_thread(std::string_view pid, std::string_view tid) const {
  std::string key;
  key.reserve(pid.size() + tid.size() + 1);
  key.append(pid).push_back('\0');
  key.append(tid);
  auto it = thread_index_.find(key);
  return it != thread_index_.end() && threads_[it->second].derived;
}

// XProf's streaming trace viewer names a process "<host> /device:GPU:0" where XLA's exporter
// writes "/device:GPU:0" and a jaxprof export puts the host in `args.host`: the host is split
// off, so the plane keeps the name its analyses know.
static void split_host_prefix(std::string& name, std::string& host) {
  const size_t slash = name.find(" /");
  if (!host.empty() || slash == std::string::npos || slash == 0) return;
  const std::string_view plane = std::string_view(name).substr(slash + 1);
  if (!plane.starts_with("/device:") && !plane.starts_with("/host:")) return;
  if (name.find(' ') != slash) return;  // a host name has no spaces
  host = name.substr(0, slash);
  name = std::string(plane);
}

void TraceTracker::metadata(const Fields& f) {
  if (f.name == "process_name" && !f.arg_name.empty()) {
    Process& proc = processes_[process_of(f.pid)];
    proc.name = std::string(f.arg_name);
    proc.host = std::string(f.arg_host);
    split_host_prefix(proc.name, proc.host);
  }
  if (f.name == "thread_name" && !f.arg_name.empty()) {
    Thread& thread = threads_[thread_of(f.pid, f.tid)];
    thread.name = std::string(f.arg_name);
    thread.derived = f.derived;
  }
  if (f.name == "jaxprof_hlo_proto" && !f.proto.empty()) add_embedded_hlo(f);
}

// An HloProto a jaxprof export carries: into the profile's HLO index (a bad one is skipped with
// a warning, as the xplane importer does).
void TraceTracker::add_embedded_hlo(const Fields& f) {
  std::optional<std::vector<uint8_t>> bytes = base64_decode(f.proto);
  if (!bytes) {
    p_->warnings.push_back(path_ + ": skipped an embedded HloProto: not base64");
    return;
  }
  auto buffer = Buffer::from_bytes(std::move(*bytes), path_ + "!hlo");
  int64_t program = f.program_id.empty() || f.program_id == "null"
                        ? HloIndex::kUnknownProgramId
                        : hlo_program_key(program_of(f.program_id));
  try {
    p_->hlo.add(buffer->view(), program, f.bare_module);
    p_->buffers.push_back(std::move(buffer));
  } catch (const InputError& e) {
    p_->warnings.push_back(path_ + ": skipped an embedded HloProto: " + e.reason());
  }
}

// Begin/end pairs become complete events: per thread, in time order (file order on ties), an
// end closes the innermost open begin.
void TraceTracker::pair_begin_end() {
  std::stable_sort(paired_.begin(), paired_.end(), [](const Record& a, const Record& b) {
    return a.thread != b.thread ? a.thread < b.thread : a.ts_ps < b.ts_ps;
  });
  std::vector<size_t> open;
  for (size_t i = 0; i < paired_.size(); ++i) {
    if (i > 0 && paired_[i].thread != paired_[i - 1].thread) {
      ignored.unmatched += open.size();
      open.clear();
    }
    if (paired_[i].dur_ps == kBegin) {
      open.push_back(i);
    } else if (open.empty()) {
      ++ignored.unmatched;
    } else {
      Record r = paired_[open.back()];
      open.pop_back();
      if (!checked_sub(paired_[i].ts_ps, r.ts_ps, r.dur_ps) || !duration_in_range(r.dur_ps))
        fail("out of range: a begin/end (B/E) pair spans more than " + std::string(kMaxTimeText) +
                 " (begin at " + micros(r.ts_ps) + ", end at " + micros(paired_[i].ts_ps) + ")",
             -1);
      records_.push_back(r);
    }
  }
  ignored.unmatched += open.size();
  paired_.clear();
  paired_.shrink_to_fit();
}

void TraceTracker::finish() {
  pair_begin_end();
  std::erase_if(records_, [&](const Record& r) { return threads_[r.thread].derived; });
  if (records_.size() >= std::numeric_limits<uint32_t>::max() - p_->events.size())
    fail("trace has more than 4 billion events; not supported", 0);

  std::vector<uint32_t> counts(threads_.size(), 0);
  int64_t min_ts = std::numeric_limits<int64_t>::max();
  for (const Record& r : records_) {
    ++counts[r.thread];
    min_ts = std::min(min_ts, r.ts_ps);
  }
  if (records_.empty()) min_ts = 0;
  // Time zero: the earliest event, floored to a nanosecond (Host::base_ns is in ns).
  int64_t base_ns = min_ts / 1000 - (min_ts % 1000 < 0 ? 1 : 0);
  int64_t base_ps;
  if (!checked_mul(base_ns, 1000, base_ps))
    fail("out of range: the first event's \"ts\" (" + micros(min_ts) +
             ") is too far before zero to be a time in picoseconds",
         -1);
  p_->hosts[host_index_].base_ns = base_ns;

  std::vector<uint32_t> plane_of_process(processes_.size());
  uint64_t event_count = add_planes(counts, base_ns, plane_of_process);
  fill_events(plane_of_process, event_count, base_ps, min_ts);
  for (const Thread& t : threads_) {
    if (t.derived) continue;
    const Line& line = p_->lines[t.line];
    sort_line_events(p_->events, line.first_event, line.event_count,
                     {.device_clock = line.device_clock});
  }
  assign_tpu_modules();
  report();
}

std::vector<uint32_t> TraceTracker::process_order() const {
  std::vector<uint32_t> order(processes_.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return order_key(processes_[a].key) < order_key(processes_[b].key);
  });
  return order;
}

// Processes that name their host (jaxprof exports, XProf's streaming trace viewer): the first host
// named is the file's, the others become hosts of their own on the file's clock. Returns the host
// of each name.
std::map<std::string, uint32_t> TraceTracker::add_hosts(const std::vector<uint32_t>& order,
                                                        int64_t base_ns) {
  std::map<std::string, uint32_t> host_of;
  for (uint32_t pi : order) {
    const std::string& host = processes_[pi].host;
    if (host.empty() || host_of.count(host)) continue;
    if (host_of.empty()) {
      p_->hosts[host_index_].name = host;
      host_of[host] = host_index_;
    } else {
      host_of[host] = static_cast<uint32_t>(p_->hosts.size());
      p_->hosts.push_back(Host{host, path_, base_ns});
    }
  }
  return host_of;
}

// A plane per process and a line per thread, in pid and tid order, each line given its range of
// `counts` events. Sets each process's plane; returns the profile's event count with them.
uint64_t TraceTracker::add_planes(const std::vector<uint32_t>& counts, int64_t base_ns,
                                  std::vector<uint32_t>& plane_of_process) {
  const std::vector<uint32_t> order = process_order();
  std::vector<std::vector<uint32_t>> threads_of(processes_.size());
  for (uint32_t t = 0; t < threads_.size(); ++t) threads_of[threads_[t].process].push_back(t);
  uint64_t next_event = p_->events.size();
  std::map<std::string, uint32_t> host_of = add_hosts(order, base_ns);
  for (uint32_t pi : order) {
    const Process& proc = processes_[pi];
    uint32_t plane_index = static_cast<uint32_t>(p_->planes.size());
    plane_of_process[pi] = plane_index;
    Plane& plane = p_->planes.emplace_back();
    std::string name = proc.name.empty() ? "pid " + proc.key : proc.name;
    plane.name = p_->strings.intern_copy(name);
    plane.id = number_of(proc.key).value_or(static_cast<int64_t>(pi));
    plane.host = proc.host.empty() ? host_index_ : host_of[proc.host];
    plane.buffer = buffer_index_;
    plane.source = source_index_;
    plane.kind = classify_plane(name);
    auto& ts = threads_of[pi];
    std::sort(ts.begin(), ts.end(), [&](uint32_t a, uint32_t b) {
      return order_key(threads_[a].key) < order_key(threads_[b].key);
    });
    for (uint32_t t : ts) {
      if (threads_[t].derived) continue;
      uint32_t line_index = static_cast<uint32_t>(p_->lines.size());
      threads_[t].line = line_index;
      plane.lines.push_back(line_index);
      Line& line = p_->lines.emplace_back();
      line.plane = plane_index;
      line.source = source_index_;
      line.id = number_of(threads_[t].key).value_or(static_cast<int64_t>(t));
      std::string line_name = threads_[t].name.empty() ? threads_[t].key : threads_[t].name;
      line.name = p_->strings.intern_copy(line_name);
      line.timestamp_ns = base_ns;
      line.first_event = static_cast<uint32_t>(next_event);
      line.event_count = counts[t];
      line.decoded = counts[t] == 0;
      // As the XSpace importer: device planes' lines keep the device clock columns.
      line.device_clock = any_device_clock_ && is_device_plane(plane.kind);
      next_event += counts[t];
    }
  }
  return next_event;
}

// Scatters the records into their lines' ranges, in file order, on the file's time zero.
void TraceTracker::fill_events(const std::vector<uint32_t>& plane_of_process, uint64_t event_count,
                               int64_t base_ps, int64_t min_ts) {
  Events& ev = p_->events;
  ev.resize(event_count, /*uninitialised=*/true);
  std::vector<uint32_t> cursor(threads_.size());
  for (uint32_t t = 0; t < threads_.size(); ++t)
    if (!threads_[t].derived) cursor[t] = p_->lines[threads_[t].line].first_event;
  // One metadata entry per (plane, name, display name): events of one name may differ in how
  // they are shown (a jaxprof export names ops by their HLO op, other events of the kernel by
  // the kernel).
  struct KeyHash {
    size_t operator()(const std::pair<uint64_t, uint32_t>& k) const {
      return std::hash<uint64_t>()(k.first) * 31 + k.second;
    }
  };
  std::unordered_map<std::pair<uint64_t, uint32_t>, uint32_t, KeyHash> metadata_index;
  std::pair<uint64_t, uint32_t> last_key{UINT64_MAX, 0};
  uint32_t last_metadata = 0;
  for (const Record& r : records_) {
    uint32_t plane = plane_of_process[threads_[r.thread].process];
    std::pair<uint64_t, uint32_t> key{(static_cast<uint64_t>(plane) << 32) | r.name, r.display};
    if (key != last_key) {
      auto [it, inserted] =
          metadata_index.try_emplace(key, static_cast<uint32_t>(p_->event_metadata.size()));
      if (inserted) {
        EventMetadata& m = p_->event_metadata.emplace_back();
        m.plane = plane;
        m.id = static_cast<int64_t>(it->second);
        m.name = r.name;
        m.display_name = r.display;
      }
      last_key = key;
      last_metadata = it->second;
    }
    uint32_t e = cursor[r.thread]++;
    if (!checked_sub(r.ts_ps, base_ps, ev.start_ps[e]) || !time_in_range(ev.start_ps[e]))
      fail("out of range: an event at \"ts\" " + micros(r.ts_ps) + " lies more than " +
               kMaxTimeText + " after the trace's first event (at " + micros(min_ts) + ")",
           -1);
    ev.duration_ps[e] = r.dur_ps;
    ev.metadata[e] = last_metadata;
    ev.raw[e] = r.stats;
    ev.hlo_op[e] = r.hlo_op;
    ev.module[e] = r.module;
    if (p_->lines[threads_[r.thread].line].device_clock) {
      ev.device_start_ps[e] = r.device_start_ps;
      ev.device_duration_ps[e] = r.device_duration_ps;
    }
  }
  records_.clear();
  records_.shrink_to_fit();
}

// TPU op events name no module in the trace (the xplane has it as a program id on their
// metadata); the enclosing event on the plane's "XLA Modules" line, named "module(program id)",
// gives it.
void TraceTracker::assign_tpu_modules() {
  for (uint32_t pi = first_plane_; pi < p_->planes.size(); ++pi) {
    const Plane& plane = p_->planes[pi];
    if (plane.kind != PlaneKind::kTpu) continue;
    const Line* modules = nullptr;
    for (uint32_t li : plane.lines)
      if (p_->str(p_->lines[li].name) == "XLA Modules") modules = &p_->lines[li];
    if (modules == nullptr || modules->event_count == 0) continue;
    Events& ev = p_->events;
    std::vector<uint32_t> module_of(modules->event_count, 0);
    for (uint32_t i = 0; i < modules->event_count; ++i) {
      std::string_view name = p_->event_name(modules->first_event + i);
      size_t open = name.rfind('(');
      if (open == std::string_view::npos || !name.ends_with(')')) continue;
      ProgramId id = program_of(name.substr(open + 1, name.size() - open - 2));
      StringId module_name = p_->strings.intern_copy(name.substr(0, open));
      module_of[i] = p_->intern_module(ModuleKey{module_name, id});
    }
    for (uint32_t li : plane.lines) {
      const Line& line = p_->lines[li];
      if (&line == modules) continue;
      uint32_t m = 0;  // modules are sorted and do not overlap: one pointer suffices
      for (uint32_t e = line.first_event; e < line.first_event + line.event_count; ++e) {
        if (ev.module[e] != 0 || ev.hlo_op[e] == 0) continue;
        while (m < modules->event_count && ev.end_ps(modules->first_event + m) <= ev.start_ps[e])
          ++m;
        if (m < modules->event_count && ev.start_ps[modules->first_event + m] <= ev.start_ps[e])
          ev.module[e] = module_of[m];
      }
    }
  }
}

void TraceTracker::report() {
  std::string notes;
  auto note = [&](uint64_t n, const char* what) {
    if (n == 0) return;
    if (!notes.empty()) notes += ", ";
    notes += std::to_string(n) + " " + what;
  };
  note(ignored.counters, "counter (C) events");
  note(ignored.other, "events of other phases (flow, async, sample, object)");
  note(ignored.unmatched, "unmatched begin/end (B/E) events");
  note(ignored.malformed, "events without a timestamp or not objects");
  if (!notes.empty()) p_->warnings.push_back(path_ + ": ignored " + notes);
}

}  // namespace jaxprof::chrome_trace
