// The Chrome trace import's state across events: processes and threads (which become planes and
// lines), the metadata events that name them, begin/end pairs, what the import ignored, and, once
// every event is read, the planes, lines and event columns themselves.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "jaxprof/formats/chrome_trace/trace_import.h"
#include "jaxprof/model/profile.h"

namespace jaxprof::chrome_trace {

class TraceTracker {
 public:
  // Events of the file `path` go to `profile` in the slots Profile::add_file gave it.
  TraceTracker(Profile& profile, std::string path, const Profile::FileSlots& slots);

  // Room for `n` records, reserved before reading: address space, not memory, until used.
  void reserve(size_t n) { records_.reserve(n); }

  // The thread (pid, tid) names, created on first sight with its process.
  uint32_t thread_of(std::string_view pid, std::string_view tid);

  // Whether (pid, tid) was named as a derived track (a jaxprof export's); creates nothing.
  bool derived_thread(std::string_view pid, std::string_view tid) const;

  // A metadata (`M`) event: a process's or thread's name, or an HloProto a jaxprof export
  // carries.
  void metadata(const Fields& f);

  // An event read, in file order; begin and end events wait to be paired.
  void add(const Record& r) {
    if (r.dur_ps < 0)
      paired_.push_back(r);
    else
      records_.push_back(r);
  }

  // Some event carried its device's own clock: device planes' lines keep those columns.
  void saw_device_clock() { any_device_clock_ = true; }

  // Events the import passed over, by kind, for the warning it ends with.
  struct Ignored {
    uint64_t counters = 0, other = 0, unmatched = 0, malformed = 0, empty = 0;
  };
  Ignored ignored;

  // After the last event: planes, lines and their events into the profile, lines sorted, TPU
  // ops given their modules, and a warning for what was ignored.
  void finish();

 private:
  struct Process {
    std::string key;  // pid as written (number or string)
    std::string name;
    std::string host;  // jaxprof exports name each process's host
  };
  struct Thread {
    uint32_t process;
    std::string key;
    std::string name;
    uint32_t line = 0;
    bool derived = false;  // a track jaxprof derived when exporting: not read back
  };

  uint32_t process_of(std::string_view pid);
  void add_embedded_hlo(const Fields& f);
  void pair_begin_end();
  std::vector<uint32_t> process_order() const;
  std::map<std::string, uint32_t> add_hosts(const std::vector<uint32_t>& order, int64_t base_ns);
  uint64_t add_planes(const std::vector<uint32_t>& counts, int64_t base_ns,
                      std::vector<uint32_t>& plane_of_process);
  void fill_events(const std::vector<uint32_t>& plane_of_process, uint64_t event_count,
                   int64_t base_ps, int64_t min_ts);
  void assign_tpu_modules();
  void report();

  Profile* p_;
  std::string path_;
  uint32_t host_index_, buffer_index_, source_index_;
  uint32_t first_plane_;
  std::vector<Record> records_, paired_;
  bool any_device_clock_ = false;  // some event carried device_offset_ps and device_duration_ps
  std::vector<Process> processes_;
  std::vector<Thread> threads_;
  std::unordered_map<std::string, uint32_t> process_index_, thread_index_;
  std::string last_pid_, last_tid_;
  uint32_t last_thread_ = UINT32_MAX;
};

}  // namespace jaxprof::chrome_trace
