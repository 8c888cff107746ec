#include "jaxprof/formats/nsys_jax/nsys_jax.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <limits>
#include <map>
#include <thread>
#include <unordered_map>

#include "jaxprof/common/error.h"
#include "jaxprof/formats/nsys_jax/collective_alignment.h"
#include "jaxprof/formats/nsys_jax/nsys_device_metadata.h"
#include "jaxprof/formats/nsys_jax/nsys_gpu_ranges.h"
#include "jaxprof/formats/nsys_jax/nsys_host_ranges.h"
#include "jaxprof/formats/nsys_jax/nsys_launch_threads.h"
#include "jaxprof/io/jobs.h"
#include "jaxprof/io/parquet.h"
#include "jaxprof/io/xz.h"
#include "jaxprof/io/zip.h"
#include "jaxprof/model/time_range.h"

namespace jaxprof {

namespace {

constexpr std::string_view kTraceMember = "nvtx_gpu_proj_trace/trace.parquet";
constexpr std::string_view kThreadsMember = "thread-metadata.parquet";
constexpr std::string_view kDevicesMember = "device-metadata.parquet";
constexpr std::string_view kPushPopCsv = "report_nvtx_pushpop_trace.csv.xz";
constexpr std::string_view kPushPopParquet = "report_nvtx_pushpop_trace.parquet";
constexpr std::string_view kHloSuffix = "after_optimizations.hlo.pb.xz";
// An HLO dump is a few MB; anything beyond this ratio is not one.
constexpr size_t kMaxXzRatio = 1000;
constexpr size_t kMinXzCap = size_t{64} << 20;
// ZipArchive::read has checked the member's CRC-32 over the xz bytes, so xz's own check of the
// output (CRC-64 over megabytes) would only repeat it.
constexpr bool kVerifyXzCheck = false;

// What decode_lines writes, one per event, in line order.
struct Record {
  int64_t start_ps, duration_ps;  // the start from the host's time zero (Host::base_ns)
  uint32_t metadata;
  StringId hlo_op, op_path;
  uint32_t module;  // the event's module column (0 on host threads: they run no module)
  int64_t range_id;
  StringId stat_module = 0;  // what the hlo_module / program_id stats say
  ProgramId stat_program = kNoProgram;
};

// A range's start from the host's time zero and its duration, in picoseconds within the model's
// range; anything else is bad input naming the member and the values.
void times_ps(const std::string& file, int64_t start_ns, int64_t duration_ns, int64_t host_base,
              Record& rec) {
  if (duration_ns < 0 || !ns_to_ps(duration_ns, rec.duration_ps) ||
      !ps_since(start_ns, host_base, rec.start_ps))
    throw InputError(file, fmt::format("out of range: a range at {} ns lasting {} ns lies more "
                                       "than {} from the process's first range (at {} ns)",
                                       start_ns, duration_ns, kMaxTimeText, host_base));
}

// A process's host NVTX ranges, decoded off the main thread; names point into the storage.
struct HostTable {
  std::vector<uint8_t> storage, text;
  std::vector<ParquetColumn> columns;
  std::vector<HostRange> ranges;
};

// One profiled process: its members in the archive.
struct ProcessMembers {
  std::string host;
  const ZipEntry* trace = nullptr;
  const ZipEntry* threads = nullptr;
  const ZipEntry* devices = nullptr;
  const ZipEntry* pushpop = nullptr;      // host NVTX ranges, CSV (xz) or Parquet
  std::unique_ptr<HostTable> host_table;  // filled by job `host_job` when pushpop is set
  size_t host_job = 0;
};

void decode_host_table(const ZipArchive& zip, const ZipEntry& entry, HostTable& t) {
  std::string member = zip.member_path(entry);
  std::string_view raw = zip.read(entry, t.storage);
  if (entry.name.starts_with(kPushPopParquet)) {
    t.ranges = parse_pushpop_parquet(raw, member, t.columns);
  } else {
    t.text = unxz(raw, member, std::max(kMinXzCap, raw.size() * kMaxXzRatio), kVerifyXzCheck);
    t.ranges = parse_pushpop_csv(
        std::string_view(reinterpret_cast<const char*>(t.text.data()), t.text.size()), member);
  }
}

// "TSL:XlaPass:#name=dce,module=jit_f,program_id=3#" -> "XlaPass:dce": XLA's ranges are named by
// kind and pass (or pipeline); module and program id become stats, so one pass is one name across
// modules. The op an autotuner measurement timed is detail: every measurement is one name.
std::string host_event_name(std::string_view n) {
  if (n.starts_with("TSL:")) n.remove_prefix(4);
  size_t k = n.find(":#");
  if (!n.starts_with("Xla") || k == std::string_view::npos) return std::string(n);
  std::string kind(n.substr(0, k));
  if (kind == "XlaAutotunerMeasurement") return kind;
  std::string_view pass = nvtx_field(n, "name=");
  return pass.empty() ? kind : kind + ":" + std::string(pass);
}

// The GPU's name and capabilities as plane stats, as XSpace GPU planes carry them.
void add_device_stats(Profile& p, Plane& plane, const NsysDevice& d) {
  if (!d.name.empty()) {
    Stat& s = plane.stats.emplace_back();
    s.name = p.strings.intern_view("device_name");
    s.value.kind = StatKind::kString;
    s.value.str = p.str(p.strings.intern_copy(d.name));
  }
  for (const auto& [name, value] : d.capabilities) {
    Stat& s = plane.stats.emplace_back();
    s.name = p.strings.intern_copy(name);
    s.value.kind = StatKind::kInt64;
    s.value.i = value;
  }
}

// A device's events, as rows of the trace's ranges: its modules with a leaf thunk, and those
// thunks.
struct DeviceEvents {
  std::vector<int32_t> modules, thunks;
};

class NsysJaxSource : public EventSource {
 public:
  NsysJaxSource(Profile& p, uint32_t source) : source_(source) {
    stat_hlo_op_ = p.strings.intern_view("hlo_op");
    stat_module_ = p.strings.intern_view("hlo_module");
    stat_program_ = p.strings.intern_view("program_id");
    stat_tf_op_ = p.strings.intern_view("tf_op");
    stat_range_ = p.strings.intern_view("nvtx_range_id");
  }

  // Everything is read from the archive here; decoding later needs only the records.
  void import_process(Profile& p, const ZipArchive& zip, const ProcessMembers& m,
                      uint32_t process_index, std::vector<std::string>& warnings, Jobs& jobs);
  // The devices' GPU planes, each with an "XLA Modules" and an "XLA Thunks" line of records.
  void add_gpu_lines(Profile& p, uint32_t host, int64_t host_base, const NsysGpuTrace& trace,
                     std::map<int64_t, DeviceEvents>& devices,
                     const std::map<int64_t, NsysDevice>& device_info);
  // Host NVTX ranges as a `/host:CPU` plane of the process, one line per thread.
  void import_host_ranges(Profile& p, uint32_t host, const std::string& member,
                          const std::vector<HostRange>& ranges,
                          const std::map<std::pair<int64_t, int64_t>, std::string>& thread_names,
                          int64_t host_base);

  void decode_lines(Profile& p, const std::vector<uint32_t>& lines) override {
    Events& ev = p.events;
    for (uint32_t li : lines) {
      Line& line = p.lines[li];
      auto [first, host_base] = line_records_.at(li);
      // Hosts share the earliest start as zero (finish_import checked that it is in range), less
      // the clock correction.
      int64_t zero_ps = 0;
      if (!ps_since(host_base, p.base_ns, zero_ps))
        throw InputError(p.hosts[p.planes[line.plane].host].path,
                         "its clock is too far from the other processes' to be one timeline");
      auto shift = host_shift_ps_.find(p.planes[line.plane].host);
      if (shift != host_shift_ps_.end()) zero_ps -= shift->second;
      for (uint32_t k = 0; k < line.event_count; ++k) {
        const Record& r = records_[first + k];
        uint32_t e = line.first_event + k;
        ev.start_ps[e] = r.start_ps + zero_ps;  // both within the model's range: no overflow
        ev.duration_ps[e] = r.duration_ps;
        ev.metadata[e] = r.metadata;
        ev.raw[e] = first + k;
        ev.hlo_op[e] = r.hlo_op;
        ev.module[e] = r.module;
      }
      line.decoded = true;
    }
  }

  std::vector<Stat> event_stats(const Profile& p, uint32_t, uint32_t e) const override {
    const Record& r = records_[p.events.raw[e]];
    std::vector<Stat> out;
    auto text = [&](StringId name, StringId value) {
      if (value == 0) return;
      Stat& s = out.emplace_back();
      s.name = name;
      s.value.kind = StatKind::kString;
      s.value.str = p.str(value);
    };
    auto number = [&](StringId name, int64_t v) {
      Stat& s = out.emplace_back();
      s.name = name;
      s.value.kind = StatKind::kInt64;
      s.value.i = v;
    };
    text(stat_hlo_op_, r.hlo_op);
    text(stat_module_, r.stat_module);
    if (r.stat_program != kNoProgram) number(stat_program_, static_cast<int64_t>(r.stat_program));
    text(stat_tf_op_, r.op_path);
    if (r.range_id >= 0) number(stat_range_, r.range_id);
    return out;
  }

  std::vector<Stat> metadata_stats(const Profile&, uint32_t) const override { return {}; }

  // Moves every event of the host `ps` earlier: decoded lines now, the others when decoded.
  void shift_host(Profile& p, uint32_t host, int64_t ps) {
    int64_t total;
    if (!time_in_range(ps) || !checked_add(host_shift_ps_[host], ps, total) ||
        !time_in_range(total))
      throw InputError(p.hosts[host].path,
                       "out of range: its clock differs from the other "
                       "processes' by more than " +
                           std::string(kMaxTimeText));
    host_shift_ps_[host] = total;
    for (const auto& [li, where] : line_records_) {
      const Line& line = p.lines[li];
      if (p.planes[line.plane].host != host || !line.decoded) continue;
      for (uint32_t k = 0; k < line.event_count; ++k) {
        int64_t& start = p.events.start_ps[line.first_event + k];
        start -= ps;  // both within range: no overflow
        if (!time_in_range(start))
          throw InputError(p.hosts[host].path,
                           "out of range: the clock correction moves an "
                           "event beyond the profile's range");
      }
    }
  }

 private:
  uint32_t plane_for(Profile& p, int64_t device, uint32_t host);
  uint32_t metadata_for(Profile& p, uint32_t plane, StringId name);

  uint32_t source_;
  StringId stat_hlo_op_, stat_module_, stat_program_, stat_tf_op_, stat_range_;
  std::vector<Record> records_;
  // Line index -> (first record, host base ns).
  std::unordered_map<uint32_t, std::pair<uint32_t, int64_t>> line_records_;
  std::map<std::pair<uint32_t, StringId>, uint32_t> metadata_;
  std::unordered_map<uint32_t, int64_t> host_shift_ps_;  // clock corrections, by host
};

uint32_t NsysJaxSource::metadata_for(Profile& p, uint32_t plane, StringId name) {
  auto [it, inserted] =
      metadata_.try_emplace({plane, name}, static_cast<uint32_t>(p.event_metadata.size()));
  if (inserted) {
    EventMetadata& m = p.event_metadata.emplace_back();
    m.plane = plane;
    m.id = static_cast<int64_t>(it->second);
    m.name = name;
  }
  return it->second;
}

// The device the process's main thread drives: that of the first launcher thread listed, or the
// only GPU the process saw (a process driving one GPU has no launcher threads); failing both, the
// process's index, with a warning.
int64_t main_device_of(const NsysThreads& threads, const std::map<int64_t, NsysDevice>& device_info,
                       uint32_t process_index, const std::string& file,
                       std::vector<std::string>& warnings) {
  int64_t main_device = threads.first_launcher_device;
  if (main_device < 0 && device_info.size() == 1) main_device = device_info.begin()->first;
  if (main_device < 0) {
    main_device = process_index;
    warnings.push_back(file + ": no XlaLauncher threads in the thread metadata; calling the device " +
                       std::to_string(main_device));
  }
  return main_device;
}

// The leaf thunks and their modules, by the device of the thread that ran the module (a launcher
// thread's device, else `main_device`).
std::map<int64_t, DeviceEvents> events_by_device(std::vector<NsysRange>& ranges,
                                                 const NsysThreads& threads, int64_t main_device) {
  auto device_of = [&](const NsysRange& r) {
    auto it = threads.launcher_device.find({r.pid, r.tid});
    return it == threads.launcher_device.end() ? main_device : it->second;
  };
  std::map<int64_t, DeviceEvents> devices;
  for (size_t i = 0; i < ranges.size(); ++i) {
    NsysRange& r = ranges[i];
    if (r.kind != NsysRangeKind::kThunk || r.module < 0 || r.has_child_thunk) continue;
    NsysRange& mod = ranges[r.module];
    DeviceEvents& d = devices[device_of(mod)];
    if (!mod.used) d.modules.push_back(r.module);
    mod.used = true;
    d.thunks.push_back(static_cast<int32_t>(i));
  }
  return devices;
}

// The earliest start of the devices' events; INT64_MAX when there are none.
int64_t earliest_start(const std::vector<NsysRange>& ranges,
                       const std::map<int64_t, DeviceEvents>& devices) {
  int64_t earliest = std::numeric_limits<int64_t>::max();
  for (auto& [device, d] : devices)
    for (int32_t i : d.modules) earliest = std::min(earliest, ranges[i].start_ns);
  for (auto& [device, d] : devices)
    for (int32_t i : d.thunks) earliest = std::min(earliest, ranges[i].start_ns);
  return earliest;
}

void NsysJaxSource::import_process(Profile& p, const ZipArchive& zip_, const ProcessMembers& m,
                                   uint32_t process_index, std::vector<std::string>& warnings,
                                   Jobs& jobs) {
  // Thread names: XlaLauncher threads drive one device each.
  NsysThreads threads;
  if (m.threads) threads = read_thread_metadata(zip_, *m.threads);
  NsysGpuTrace trace;
  read_gpu_trace(zip_, *m.trace, trace);
  const std::string& file = trace.file;
  if (trace.orphans)
    warnings.push_back(file + ": ignored " + std::to_string(trace.orphans) +
                       " thunks outside any XlaModule range (profile started mid-module)");

  // The GPUs the process saw, by global id, with their description.
  std::map<int64_t, NsysDevice> device_info;
  if (m.devices) {
    std::vector<uint8_t> device_storage;
    std::string_view raw = zip_.read(*m.devices, device_storage);
    device_info = parse_device_metadata(raw, zip_.member_path(*m.devices));
  }
  int64_t main_device = -1;
  if (m.threads) {
    main_device = main_device_of(threads, device_info, process_index, file, warnings);
  } else {
    // The older layout: every launching thread is a GPU (main_device is then never used).
    LaunchThreadDevices by_thread =
        devices_from_launch_threads(trace.ranges, device_info, process_index);
    threads.launcher_device = by_thread.device;
    main_device = by_thread.device.empty() ? process_index : by_thread.device.begin()->second;
    // One GPU the device table names is certain; anything else rests on nsys-jax's assumption.
    if (!by_thread.ids_from_table || by_thread.local_devices != 1 || by_thread.conflicts)
      warnings.push_back(launch_thread_warning(zip_.path(), by_thread, m.devices != nullptr));
  }

  uint32_t host = static_cast<uint32_t>(p.hosts.size());
  p.hosts.push_back(Host{m.host, zip_.member_path(*m.trace), 0});

  // Events per device: modules and leaf thunks.
  std::map<int64_t, DeviceEvents> devices = events_by_device(trace.ranges, threads, main_device);
  int64_t host_base = earliest_start(trace.ranges, devices);
  // Host NVTX ranges: compile phases usually come before the first GPU range.
  static const std::vector<HostRange> kNoRanges;
  const std::vector<HostRange>& host_ranges = m.pushpop ? m.host_table->ranges : kNoRanges;
  if (m.pushpop) {
    jobs.wait(m.host_job);
    for (const HostRange& r : host_ranges) host_base = std::min(host_base, r.start_ns);
  }
  if (host_base == std::numeric_limits<int64_t>::max()) host_base = 0;
  p.hosts[host].base_ns = host_base;

  add_gpu_lines(p, host, host_base, trace, devices, device_info);
  if (!host_ranges.empty())
    import_host_ranges(p, host, zip_.member_path(*m.pushpop), host_ranges, threads.names,
                       host_base);
}

void NsysJaxSource::add_gpu_lines(Profile& p, uint32_t host, int64_t host_base,
                                  const NsysGpuTrace& trace,
                                  std::map<int64_t, DeviceEvents>& devices,
                                  const std::map<int64_t, NsysDevice>& device_info) {
  const std::string& file = trace.file;
  const std::vector<NsysRange>& ranges = trace.ranges;
  const std::string& thunk_prefix = trace.thunk_prefix;
  std::unordered_map<int32_t, uint32_t> module_of_range;
  auto module_key = [&](int32_t row) {
    auto [it, inserted] = module_of_range.try_emplace(row, 0);
    if (!inserted) return it->second;
    std::string_view name = nvtx_field(ranges[row].name, "hlo_module=");
    int64_t program = -1;
    ProgramId pid_key =
        parse_nvtx_int(nvtx_field(ranges[row].name, "program_id="), program) && program >= 0
            ? static_cast<ProgramId>(program)
            : kNoProgram;
    it->second = p.intern_module(ModuleKey{p.strings.intern_copy(name), pid_key});
    return it->second;
  };

  auto by_time = [&](int32_t a, int32_t b) {
    if (ranges[a].start_ns != ranges[b].start_ns) return ranges[a].start_ns < ranges[b].start_ns;
    return ranges[a].duration_ns > ranges[b].duration_ns;
  };
  for (auto& [device, d] : devices) {
    uint32_t plane = plane_for(p, device, host);
    if (auto it = device_info.find(device);
        it != device_info.end() && p.planes[plane].stats.empty())
      add_device_stats(p, p.planes[plane], it->second);
    for (int which = 0; which < 2; ++which) {
      std::vector<int32_t>& rows = which == 0 ? d.modules : d.thunks;
      std::stable_sort(rows.begin(), rows.end(), by_time);
      uint32_t li = static_cast<uint32_t>(p.lines.size());
      Line& line = p.lines.emplace_back();
      line.plane = plane;
      line.source = source_;
      line.id = which;
      line.name = p.strings.intern_view(which == 0 ? "XLA Modules" : "XLA Thunks");
      line.timestamp_ns = host_base;
      line.first_event = static_cast<uint32_t>(p.events.size());
      if (p.events.size() + rows.size() >= std::numeric_limits<uint32_t>::max())
        throw InputError(file, "more than 4 billion events; not supported");
      line.event_count = static_cast<uint32_t>(rows.size());
      line.decoded = rows.empty();
      p.events.resize(p.events.size() + rows.size(), /*uninitialised=*/true);
      p.planes[plane].lines.push_back(li);
      line_records_[li] = {static_cast<uint32_t>(records_.size()), host_base};
      for (int32_t row : rows) {
        const NsysRange& r = ranges[row];
        Record rec{0, 0, 0, 0, 0, 0, r.range_id};
        times_ps(file, r.start_ns, r.duration_ns, host_base, rec);
        if (which == 0) {
          rec.module = module_key(row);
          rec.metadata = metadata_for(p, plane, p.modules[rec.module].name);
        } else {
          rec.module = module_key(r.module);
          std::string_view op = nvtx_field(r.name, "hlo_op=");
          if (op.empty()) op = r.name.substr(thunk_prefix.size());
          rec.hlo_op = p.strings.intern_copy(op);
          // The JAX op path: "name=" may itself hold commas, so it runs up to ",hlo_op=".
          size_t b = r.name.find("#name=");
          size_t e = r.name.find(",hlo_op=");
          if (b != std::string_view::npos && e != std::string_view::npos && e > b + 6)
            rec.op_path = p.strings.intern_copy(r.name.substr(b + 6, e - b - 6));
          rec.metadata = metadata_for(p, plane, rec.hlo_op);
        }
        rec.stat_module = p.modules[rec.module].name;
        rec.stat_program = p.modules[rec.module].program_id;
        records_.push_back(rec);
      }
    }
  }
}

void NsysJaxSource::import_host_ranges(
    Profile& p, uint32_t host, const std::string& member, const std::vector<HostRange>& ranges,
    const std::map<std::pair<int64_t, int64_t>, std::string>& thread_names, int64_t host_base) {
  uint32_t plane = static_cast<uint32_t>(p.planes.size());
  {
    Plane& pl = p.planes.emplace_back();
    pl.name = p.strings.intern_view("/host:CPU");
    pl.host = host;
    pl.source = source_;
    pl.kind = PlaneKind::kHostCpu;
  }
  // One line per thread; the process's main thread (TID == PID) first.
  std::map<std::pair<bool, int64_t>, std::vector<uint32_t>> by_thread;
  for (uint32_t i = 0; i < ranges.size(); ++i)
    by_thread[{ranges[i].tid != ranges[i].pid, ranges[i].tid}].push_back(i);
  std::unordered_map<std::string_view, std::pair<std::string, uint32_t>> names;
  for (auto& [key, rows] : by_thread) {
    std::stable_sort(rows.begin(), rows.end(), [&](uint32_t a, uint32_t b) {
      if (ranges[a].start_ns != ranges[b].start_ns) return ranges[a].start_ns < ranges[b].start_ns;
      return ranges[a].end_ns > ranges[b].end_ns;
    });
    const HostRange& first = ranges[rows.front()];
    auto tn = thread_names.find({first.pid, first.tid});
    uint32_t li = static_cast<uint32_t>(p.lines.size());
    Line& line = p.lines.emplace_back();
    line.plane = plane;
    line.source = source_;
    line.id = first.tid;
    // Threads often share the process's name ("main.py"): the TID tells them apart.
    std::string tname = tn != thread_names.end() ? tn->second : "thread";
    line.name = p.strings.intern_copy(tname + " (" + std::to_string(first.tid) + ")");
    line.timestamp_ns = host_base;
    line.first_event = static_cast<uint32_t>(p.events.size());
    if (p.events.size() + rows.size() >= std::numeric_limits<uint32_t>::max())
      throw InputError(p.hosts[host].path, "more than 4 billion events; not supported");
    line.event_count = static_cast<uint32_t>(rows.size());
    line.decoded = false;
    p.events.resize(p.events.size() + rows.size(), /*uninitialised=*/true);
    p.planes[plane].lines.push_back(li);
    line_records_[li] = {static_cast<uint32_t>(records_.size()), host_base};
    for (uint32_t row : rows) {
      const HostRange& r = ranges[row];
      auto [it, added] = names.try_emplace(r.name);
      if (added) {
        it->second.first = host_event_name(r.name);
        it->second.second = metadata_for(p, plane, p.strings.intern_copy(it->second.first));
      }
      Record rec{0, 0, it->second.second, 0, 0, 0, -1};
      int64_t duration_ns;
      if (!checked_sub(r.end_ns, r.start_ns, duration_ns)) duration_ns = -1;
      times_ps(member, r.start_ns, duration_ns, host_base, rec);
      std::string_view mod = nvtx_field(r.name, "module=");
      if (mod.empty()) mod = nvtx_field(r.name, "hlo_module=");
      if (!mod.empty()) {
        int64_t program = -1;
        if (parse_nvtx_int(nvtx_field(r.name, "program_id="), program) && program >= 0)
          rec.stat_program = static_cast<ProgramId>(program);
        rec.stat_module = p.strings.intern_copy(mod);
      }
      records_.push_back(rec);
    }
  }
}

uint32_t NsysJaxSource::plane_for(Profile& p, int64_t device, uint32_t host) {
  std::string name = "/device:GPU:" + std::to_string(device);
  // Several processes may claim the same device id only in a broken combination: keep them apart.
  for (const Plane& pl : p.planes)
    if (p.str(pl.name) == name && pl.source == source_ && pl.host == host)
      return static_cast<uint32_t>(&pl - p.planes.data());
  uint32_t index = static_cast<uint32_t>(p.planes.size());
  Plane& plane = p.planes.emplace_back();
  plane.name = p.strings.intern_copy(name);
  plane.id = device;
  plane.host = host;
  plane.buffer = 0;
  plane.source = source_;
  plane.kind = PlaneKind::kGpu;
  return index;
}

// "dump/module_0040.pjit__wrapped_step_fn.sm_8.0_gpu_after_optimizations.hlo.pb.xz" -> 40.
bool program_id_of_dump(std::string_view member, int64_t& id) {
  size_t slash = member.find('/');
  std::string_view file = member.substr(slash + 1);
  if (size_t s = file.find('/'); s != std::string_view::npos) file = file.substr(0, s);
  if (!file.starts_with("module_")) return false;
  file.remove_prefix(7);
  size_t dot = file.find('.');
  return dot != std::string_view::npos && parse_nvtx_int(file.substr(0, dot), id);
}

std::string stem_of(const std::string& path) {
  std::string name = path.substr(path.find_last_of('/') + 1);
  if (name.ends_with(".zip")) name.resize(name.size() - 4);
  return name;
}

}  // namespace

bool is_zip_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char head[4] = {};
  ssize_t got = ::read(fd, head, sizeof head);
  ::close(fd);
  return got == 4 && has_zip_magic(std::string_view(head, 4));
}

void import_nsys_jax(Profile& profile, std::shared_ptr<Buffer> archive, const std::string& host,
                     const ImportOptions& options) {
  (void)options;
  auto zip = std::make_unique<ZipArchive>(archive);
  profile.buffers.push_back(archive);

  // Processes: one plain archive, or the `member/<stem>` entries of a combined one.
  std::vector<ProcessMembers> processes;
  if (const ZipEntry* t = zip->find(kTraceMember)) {
    ProcessMembers& m = processes.emplace_back();
    m.host = host.empty() ? stem_of(archive->path()) : host;
    m.trace = t;
    m.threads = zip->find(kThreadsMember);
    m.devices = zip->find(kDevicesMember);
    m.pushpop = zip->find(kPushPopParquet);
    if (!m.pushpop) m.pushpop = zip->find(kPushPopCsv);
  } else {
    std::string dir = std::string(kTraceMember) + "/";
    for (const ZipEntry& e : zip->entries()) {
      if (!e.name.starts_with(dir) || e.is_directory()) continue;
      ProcessMembers& m = processes.emplace_back();
      m.host = e.name.substr(dir.size());
      m.trace = &e;
      m.threads = zip->find(std::string(kThreadsMember) + "/" + m.host);
      if (!m.threads) m.threads = zip->find(kThreadsMember);
      m.devices = zip->find(std::string(kDevicesMember) + "/" + m.host);
      if (!m.devices) m.devices = zip->find(kDevicesMember);
      m.pushpop = zip->find(std::string(kPushPopParquet) + "/" + m.host);
      if (!m.pushpop) m.pushpop = zip->find(std::string(kPushPopCsv) + "/" + m.host);
    }
    std::sort(processes.begin(), processes.end(),
              [](const ProcessMembers& a, const ProcessMembers& b) { return a.host < b.host; });
  }
  if (processes.empty())
    throw InputError(archive->path(),
                     "not an nsys-jax archive: no member " + std::string(kTraceMember));

  // Decompressing and decoding the HLO dumps and host range tables (xz is most of the time it
  // takes to load an archive) runs on worker threads while the main thread reads the GPU ranges.
  // A dump that differs between processes is stored once per process (`dump/NAME/<stem>`): the
  // first wins.
  struct Dump {
    const ZipEntry* entry;
    int64_t program_id;
    std::shared_ptr<Buffer> bytes;
    std::unique_ptr<HloModule> module;
    size_t job;
  };
  std::vector<Dump> dumps;
  std::map<int64_t, size_t> dump_of_program;
  for (const ZipEntry& e : zip->entries()) {
    if (!e.name.starts_with("dump/") || e.is_directory()) continue;
    std::string_view n = e.name;
    if (size_t s = n.find('/', 5); s != std::string_view::npos) n = n.substr(0, s);
    if (!n.ends_with(kHloSuffix)) continue;
    int64_t id;
    if (!program_id_of_dump(e.name, id)) continue;
    if (dump_of_program.count(id)) continue;
    dump_of_program[id] = dumps.size();
    dumps.push_back(Dump{&e, id, nullptr, nullptr, 0});
  }
  Jobs jobs;
  for (Dump& d : dumps)
    d.job = jobs.add(d.entry->compressed_size, [&zip, &d] {
      std::string path = zip->member_path(*d.entry);
      std::vector<uint8_t> storage;
      std::string_view raw = zip->read(*d.entry, storage);
      d.bytes = Buffer::from_bytes(
          unxz(raw, path, std::max(kMinXzCap, raw.size() * kMaxXzRatio), kVerifyXzCheck), path);
      try {
        d.module = HloIndex::parse(d.bytes->view());
      } catch (const InputError& e) {
        throw InputError(path, "not a valid HloProto: " + e.reason(), e.offset());
      }
    });
  for (ProcessMembers& m : processes) {
    if (!m.pushpop) continue;
    m.host_table = std::make_unique<HostTable>();
    m.host_job = jobs.add(m.pushpop->compressed_size,
                          [&zip, &m] { decode_host_table(*zip, *m.pushpop, *m.host_table); });
  }
  unsigned threads = std::max(1u, std::min<unsigned>(std::thread::hardware_concurrency(), 8));
  if (options.threads) threads = options.threads;
  jobs.start(threads);

  // Members an archive may lack, each with what goes without it (the older layout lacks the
  // thread and device tables: import_process says how the devices are found then).
  for (const ProcessMembers& m : processes)
    if (!m.pushpop)
      profile.warnings.push_back(zip->path() + ": no member " + std::string(kPushPopCsv) + " or " +
                                 std::string(kPushPopParquet) + " for " + m.host +
                                 " (host NVTX ranges): no compile phases (compile), nothing set "
                                 "apart as compiling");
  if (dumps.empty())
    profile.warnings.push_back(zip->path() + ": no HLO dump (dump/*" + std::string(kHloSuffix) +
                               "): ops without opcode, category, source line or replica groups; "
                               "collectives without message sizes (roofline, collectives)");

  uint32_t source = static_cast<uint32_t>(profile.sources.size());
  auto src = std::make_unique<NsysJaxSource>(profile, source);
  for (uint32_t i = 0; i < processes.size(); ++i)
    src->import_process(profile, *zip, processes[i], i, profile.warnings, jobs);
  profile.sources.push_back(std::move(src));
  for (Dump& d : dumps) {
    jobs.wait(d.job);
    profile.buffers.push_back(d.bytes);
    profile.hlo.insert(std::move(d.module), d.program_id);
  }
}

std::vector<int64_t> align_nsys_jax_clocks(Profile& profile) {
  ClockSkew skew = collective_end_skews(profile);
  for (uint32_t h = 0; h < skew.host_skew_ps.size(); ++h) {
    if (skew.host_skew_ps[h] == 0) continue;
    for (const Plane& plane : profile.planes) {
      if (plane.host != h) continue;
      if (auto* src = dynamic_cast<NsysJaxSource*>(profile.sources[plane.source].get())) {
        src->shift_host(profile, h, skew.host_skew_ps[h]);
        break;
      }
    }
  }
  return skew.host_skew_ps;
}

}  // namespace jaxprof
