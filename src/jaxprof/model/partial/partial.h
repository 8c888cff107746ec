// A host's partial summary: everything the profile-wide analyses (summary, ops, timeline,
// modules, steps, collectives, compile, diff samples) need from one host, in integers, small
// (proportional to ops, executions and collectives, not to events), and a set of them from which
// those analyses give their results. Hosts never share a device, so a set of hosts is the union
// of their partials: merging is exactly associative and commutative, and the analyses of a set
// equal those of the same hosts loaded together (every command computes them this way, one host
// or many). The file format is in partial_file.h, the rules in docs/multihost.md.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "jaxprof/model/compile_record.h"
#include "jaxprof/model/device_timeline.h"
#include "jaxprof/model/execution_role.h"
#include "jaxprof/model/partial/partial_sums.h"
#include "jaxprof/model/profile.h"

namespace jaxprof {

// Raised when the format changes in a way an older reader would misread. 2: op durations and
// self times on the device's own clock where events carry it; copies and fills by the events'
// own stats and streams. Added parts keep it: Host.parts says what a file holds, and a command
// names the part a file lacks.
inline constexpr uint32_t kPartialVersion = 2;

// What a partial holds (bits): a command extracts only what it needs from a profile; a partial
// file holds everything.
enum PartialPart : uint32_t {
  kPartOps = 1u << 0,            // op groups per device
  kPartTimeline = 1u << 1,       // busy / idle / span per device
  kPartExecutions = 1u << 2,     // module executions per device
  kPartExecutionOps = 1u << 3,   // per execution, each op's summed time (varying ops, diff)
  kPartSteps = 1u << 4,          // step marks
  kPartCollectives = 1u << 5,    // collective executions per device
  kPartCompile = 1u << 6,        // compiles with phases and steps
  kPartCompileTotals = 1u << 7,  // compiles' wall time and module only (summary)
  kPartKernels = 1u << 8,        // GPU kernels per device, by kernel name
  kPartFlame = 1u << 9,          // flamegraph stacks per device, aggregated by stack
  // Everything but the totals-only compile.
  kPartAll = kPartOps | kPartTimeline | kPartExecutions | kPartExecutionOps | kPartSteps |
             kPartCollectives | kPartCompile | kPartKernels | kPartFlame,
};

// Moments of a set of durations in exact integers: merging them in any order or grouping gives
// the same numbers, and the mean and standard deviation are functions of them alone.
struct DurationMoments {
  uint64_t count = 0;
  int64_t sum = 0;
  unsigned __int128 sum_sq = 0;
  int64_t min = INT64_MAX, max = INT64_MIN;

  void add(int64_t d) {
    ++count;
    sum += d;
    sum_sq += static_cast<unsigned __int128>(static_cast<__int128>(d) * d);
    min = d < min ? d : min;
    max = d > max ? d : max;
  }
  void merge(const DurationMoments& o);
  double mean() const;
  // Population standard deviation, from the integers (see partial.cc).
  double std() const;
};

// Strings of one partial, interned: id 0 is "".
class PartialStrings {
 public:
  PartialStrings() { strings_.emplace_back(); }
  uint32_t id(std::string_view s);
  const std::string& operator[](uint32_t id) const { return strings_[id]; }
  size_t size() const { return strings_.size(); }
  const std::vector<std::string>& all() const { return strings_; }
  void assign(std::vector<std::string> strings);  // from a file: [0] must be ""

 private:
  std::vector<std::string> strings_;
  std::unordered_map<std::string, uint32_t> index_;
};

struct PartialModule {
  uint32_t name = 0;  // string; 0 = no module
  ProgramId program_id = kNoProgram;
};

// Op events of one device with one (module, HLO op, kernel name, display name): the finest
// grouping, from which every --group-by of `ops` is a union.
struct PartialOpGroup {
  uint32_t module = 0;       // index into HostPartial::modules
  uint32_t hlo_op = 0;       // string: the event's hlo_op; 0 = none
  uint32_t kernel = 0;       // the event metadata's name
  uint32_t display = 0;      // its display name, else its name
  DurationMoments duration;  // on the device clock where events carry it (op_clock.h)
  int64_t self_ps = 0;
  uint64_t first = 0;  // position of the group's first event among the device's op events
  // What `ops` says of an HLO op, from the HLO index or the first event's tf_op stat.
  uint32_t opcode = 0, op_name = 0, source = 0;
  // string: the category (category.h), from the HLO where the host had it; 0 = not recorded
  uint32_t category = 0;
};

// Opcode, JAX op path, source line and category of an op as diff describes it (strings).
struct PartialOpInfo {
  uint32_t opcode = 0, op_name = 0, source = 0, category = 0;
  bool operator==(const PartialOpInfo&) const = default;
};

// One op's events inside one module execution.
struct PartialExecutionOp {
  uint32_t name = 0;  // string: hlo_op, else the event name
  int64_t total_ps = 0;
  uint32_t events = 0;
  uint32_t info = 0;  // index into HostPartial::op_infos, of the op's first event in the execution
};

struct PartialExecution {
  uint32_t module = 0;  // index into HostPartial::modules
  std::optional<int64_t> run_id;
  int64_t start_ps = 0, end_ps = 0;  // host clock (relative to HostPartial::base_ns)
  bool warmup = false;
  ExecutionRole role = ExecutionRole::kSteady;  // steady_state.h (whatever the options)
  uint64_t events = 0;
  uint32_t first_op = 0, ops = 0;  // range in PartialDevice::execution_ops
};

struct PartialCollectiveOp {
  uint32_t module = 0;  // index into HostPartial::modules
  uint32_t name = 0;    // the op that names the operation (the start of a pair; "?opcode" when
                        // the pairing is unknown)
  uint32_t opcode = 0;  // synchronous form
  bool async = false;
  uint64_t message_bytes = 0;
  uint32_t shapes = 0;
  int64_t group_size = 0;     // size of the first replica group in the HLO; 0 = none
  uint32_t groups = 0;        // replica groups in the HLO
  int64_t device_group = -1;  // the group that holds this device's number; -1 = none
};

struct PartialCollectiveExecution {
  uint32_t op = 0;                                   // index into PartialDevice::collective_ops
  int64_t begin_ps = 0, end_ps = 0, exposed_ps = 0;  // begin and end on the timeline
  int64_t duration_ps = 0;  // on the device clock where its events carry it (op_clock.h)
  std::optional<int64_t> run_id;
};

// One (module, HLO op) that launched a kernel on a device.
struct PartialKernelOp {
  uint32_t module = 0;  // index into HostPartial::modules
  uint32_t hlo_op = 0;  // string; 0 = none
  int64_t total_ps = 0;
  uint64_t first = 0;    // position of its first launch among the device's kernel launches
  uint32_t op_name = 0;  // string: JAX op path, from the HLO, else that launch's tf_op stat
};

// A launch configuration: a distinct kernel_details text.
struct PartialKernelConfig {
  uint32_t details = 0;  // string
  uint64_t count = 0;
  int64_t total_ps = 0;
};

// Launches of one kernel name (and display name) on one GPU.
struct PartialKernel {
  uint32_t name = 0;     // string: the event metadata name (the group)
  uint32_t display = 0;  // string: its display name, else the name (what --prefix/--match test)
  uint64_t count = 0;
  int64_t total_ps = 0, min_ps = 0, max_ps = 0;
  std::vector<PartialKernelConfig> configs;
  std::vector<PartialKernelOp> ops;
};

// A GPU plane with events on its op lines (kernels.h).
struct PartialKernelDevice {
  std::string name;
  std::vector<PartialKernel> kernels;  // in the order of their first launch
};

// What `kernels` needs of a host, and what it says when there are no kernels.
struct PartialKernels {
  bool gpu_events = false;                 // some GPU plane has events
  bool host_cpu = false;                   // the host has a /host:CPU plane
  std::vector<std::string> other_devices;  // TPU and other device planes with events, sorted
  std::vector<PartialKernelDevice> devices;
};

// A device's flamegraph below its device frame, one tree per FlameBy (flame.h), aggregated by
// stack: frames in the order they were made, each with its parent (0 = the device frame, else
// 1 + its index) and the weight of the stack ending there. Idle frames are not kept: they come
// from PartialFlame's figures.
struct PartialFlameFrame {
  uint32_t parent = 0;
  uint32_t name = 0;    // string; for module frames (kind kModule) the module instead
  uint32_t module = 0;  // index into HostPartial::modules (module frames)
  uint8_t kind = 0;     // FrameKind
  int64_t self_ps = 0;
};

struct PartialFlame {
  bool present = false;  // the device has op events in the steady state (a flame device)
  uint64_t events = 0;
  int64_t busy_ps = 0, span_ps = 0;
  bool has_modules = false;
  int64_t idle_during_modules_ps = 0, idle_between_modules_ps = 0, set_apart_ps = 0;
  std::vector<uint32_t> modules_used;    // modules op events name (set apart or not), ascending
  std::vector<PartialFlameFrame> by[3];  // by FlameBy: source, op-name, module
  uint8_t bys = 0;                       // bit per FlameBy extracted
};

struct PartialDevice {
  std::string name;
  uint32_t plane = 0;  // in its host's file: devices that share a plane share step windows
  // ops
  uint64_t op_events = 0, op_selected = 0;
  // op events whose durations and self times are on the device's own clock (op_clock.h); busy
  // and span are always on the timeline's
  uint64_t op_device_clock_events = 0;
  uint64_t op_set_apart = 0;  // op events of executions set apart (not in op_events)
  int64_t op_busy_ps = 0, op_span_ps = 0;
  std::vector<PartialOpGroup> op_groups;
  // timeline (names left empty)
  DeviceTimeline timeline;
  // module executions
  ExecutionSource execution_source = ExecutionSource::kNone;
  std::vector<PartialExecution> executions;  // by start
  std::vector<PartialExecutionOp> execution_ops;
  // collectives
  std::vector<PartialCollectiveOp> collective_ops;  // in the order the device met them
  std::vector<PartialCollectiveExecution> collective_executions;
  PartialFlame flame;
};

enum class StepSource : uint8_t { kHostAnnotation, kStepsLine, kGroupId, kNone };
const char* step_source_name(StepSource s);

struct PartialStep {
  int64_t number = 0;
  uint32_t name = 0;
  int64_t start_ps = 0, end_ps = 0;
  uint32_t windows = 1;
  int64_t longest_window_ps = 0;
  bool compiling = false;  // a compile of the host overlaps the step (steps.h)
};

// A step's span as one scope saw it; module executions go to the window of their scope they
// start in.
struct PartialStepWindow {
  int64_t plane = -1;  // a device plane of the host (device marks); -1: the host (annotations)
  int64_t start_ps = 0, end_ps = 0;
  uint32_t step = 0;  // index into PartialSteps::steps
};

struct PartialSteps {
  StepSource source = StepSource::kNone;  // the first source that marks any step on this host
  std::vector<PartialStep> steps;         // by start
  std::vector<PartialStepWindow> windows;
};

struct PartialCompile {
  bool totals_only = false;
  std::vector<CompileRecord> records;  // by start; every step, unsorted by options
  bool saw_stage = false;
  uint64_t unattributed = 0;
};

// The steady-state options a host's partial was extracted with (its ops, timeline and
// collectives leave out what they set apart) and what the host's devices set apart.
struct PartialSteady {
  bool known = false;  // false: written before partials recorded it
  SteadyStateOptions options;
  SetApartWork autotuning, warmup;  // modules by label, sorted
  int64_t all_execution_ps = 0;
  uint64_t devices_without_steady_state = 0;
};

struct HostPartial {
  uint32_t version = kPartialVersion;
  uint32_t parts = 0;  // PartialPart bits
  std::string host, path;
  int64_t base_ns = 0;  // absolute time of the host's time 0 (its earliest line)
  uint64_t file_bytes = 0;
  // The devices are the CPU backend's (host threads with hlo_op events): in a set where some
  // host has device planes with ops, they are not devices (as op_devices decides).
  bool cpu_backend = false;
  // What the file says of its capture (session_check.h): XSpace hostnames, device kinds.
  std::vector<std::string> captured_on;
  bool gpu = false, tpu = false;
  PartialStrings strings;
  std::vector<PartialModule> modules;  // [0] = no module
  std::vector<PartialOpInfo> op_infos;
  std::vector<PartialDevice> devices;  // op_devices() order
  PartialSteps steps;
  PartialCompile compile;
  PartialKernels kernels;
  PartialSteady steady;
  std::vector<std::string> warnings;  // the import's warnings about this host's file
  bool op_capped = false;             // extraction stopped at max_events (never in a file)
  std::string partial_file;           // the partial file it was read from (never in a file)

  uint32_t module_id(std::string_view name, ProgramId program);
  uint32_t op_info_id(const PartialOpInfo& info);
  std::string_view str(uint32_t id) const { return strings[id]; }
  std::string_view module_name(uint32_t m) const { return strings[modules[m].name]; }

 private:
  std::unordered_map<std::string, uint32_t> module_index_;
  std::unordered_map<uint64_t, std::vector<uint32_t>> info_index_;
};

// Where the hosts of a set lie when the set does not hold them in memory: read from many
// hosts, a set keeps each host's partial encoded in a store (formats/partial/partial_spill.h, a
// temporary file) and decodes one host at a time, so that its memory does not grow with them.
class PartialHostStore {
 public:
  virtual ~PartialHostStore() = default;
  // The host stored at `id`, whole, or only its lists of `parts` (kPart*: the other lists stay
  // empty); throws InputError when it cannot be read back.
  virtual HostPartial load(size_t id, uint32_t parts = kPartAll) const = 0;
};

// Partials of several hosts on one clock: what the analyses read.
class PartialSet {
 public:
  PartialSet() = default;
  explicit PartialSet(std::vector<HostPartial> hosts) { add(std::move(hosts)); }

  // Adds hosts; the set stays ordered by host name (then path). Throws InputError when a host
  // is already in the set (the same host read twice), and naming the file of a host whose
  // figures would make a sum over the set overflow (partial_sums.h).
  void add(std::vector<HostPartial> hosts);
  // Adds the hosts `ids` of `store`, as add() does: each is decoded once here to check it, and
  // after that only its head (heads()) stays in memory. Analyses that go host by host
  // (for_each_host, for_each_device) decode one host at a time; hosts() decodes them all.
  void add_stored(std::shared_ptr<const PartialHostStore> store, const std::vector<size_t>& ids);
  // The union of two sets.
  void merge(PartialSet other);

  size_t size() const { return hosts_.size(); }
  bool empty() const { return hosts_.empty(); }
  // What each host says of itself: name, files, clock, parts, capture facts, warnings, steady
  // state, and its devices' names and scalar figures. In a set of stored hosts nothing else:
  // no per-device lists (op groups, executions, collectives, flame frames, timelines' lists),
  // strings, modules, steps, compiles or kernels; those come from for_each_host.
  const std::vector<HostPartial>& heads() const { return hosts_; }
  // Calls fn(index, host) for each host in order, the host whole: a stored host is decoded for
  // the call and dropped after it. `parts`: the lists fn reads (kPart*); a stored host's other
  // lists are not decoded (hosts in memory hold all theirs).
  void for_each_host(const std::function<void(uint32_t, const HostPartial&)>& fn,
                     uint32_t parts = kPartAll) const;
  // Every host whole. A set of stored hosts decodes them all here, once: the memory that
  // for_each_host spares. Analyses of thousands of hosts go host by host instead.
  const std::vector<HostPartial>& hosts() const;
  // Whether hosts() decoded a set of stored hosts (tests).
  bool decoded_all() const { return whole_ && whole_->done; }
  // Parts every host holds.
  uint32_t parts() const;
  // Throws InputError naming the first host that lacks one of `parts`.
  void require(uint32_t parts, std::string_view command) const;
  // Throws InputError naming the first host whose partial was not extracted with `steady`.
  void require_steady(const SteadyStateOptions& steady, std::string_view command) const;
  // Throws InputError naming the first host that holds none of `parts`.
  void require_any(uint32_t parts, std::string_view command) const;
  int64_t base_ns() const { return base_ns_; }
  // Add to a host's times to put them on the set's clock (relative to base_ns()).
  int64_t shift_ps(uint32_t host) const { return (hosts_[host].base_ns - base_ns_) * 1000; }

  // The op devices of the set, in order: hosts in order, each host's devices in order; the CPU
  // backend's devices only when no host has device planes with ops.
  struct DeviceRef {
    uint32_t host = 0, device = 0;
  };
  const std::vector<DeviceRef>& devices() const { return devices_; }
  // The device whole (hosts(): a set of stored hosts decodes them all).
  const PartialDevice& device(const DeviceRef& d) const {
    return hosts()[d.host].devices[d.device];
  }
  // Calls fn(ref, host, device) for each op device in the order of devices(), one host at a
  // time (for_each_host, `parts` as there).
  void for_each_device(
      const std::function<void(const DeviceRef&, const HostPartial&, const PartialDevice&)>& fn,
      uint32_t parts = kPartAll) const;

 private:
  void index();
  void decode_all() const;
  HostPartial load(uint32_t host, uint32_t parts = kPartAll) const;
  // Whole hosts; a set of stored hosts holds their heads here, with their ids in store_.
  std::vector<HostPartial> hosts_;
  std::shared_ptr<const PartialHostStore> store_;
  std::vector<size_t> store_ids_;
  struct Whole {
    std::once_flag once;
    std::vector<HostPartial> hosts;
    std::atomic<bool> done{false};
  };
  std::shared_ptr<Whole> whole_;  // hosts() of a set of stored hosts
  PartialSums sums_;
  int64_t base_ns_ = 0;
  std::vector<DeviceRef> devices_;
  std::vector<bool> counted_;  // per host: its devices are op devices
};

// What a host says of itself (PartialSet::heads): `whole` without its per-device lists,
// strings, modules, steps, compiles and kernels.
HostPartial head_of(const HostPartial& whole);

}  // namespace jaxprof
