#include "jaxprof/analysis/memory/static_memory.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>

#include "jaxprof/common/error.h"
#include "jaxprof/model/buffer_assignment.h"

namespace jaxprof {
namespace {

std::string space_label(int64_t color) {
  if (color == 0) return "device";
  if (color == 5) return "host";  // xla::Layout::kHostMemorySpace
  return fmt::format("memory space {}", color);
}

const char* allocation_kind(const BufferAllocation& a) {
  if (a.is_entry_computation_parameter) return "argument";
  if (a.maybe_live_out) return "output";
  if (a.is_thread_local) return "thread-local";
  if (a.is_constant) return "constant";
  return "temporary";
}

// The shape of a tuple element: `shape_index` walks nested tuples from the outside.
const HloShape* shape_at(const HloShape& shape, const std::vector<int64_t>& index) {
  const HloShape* s = &shape;
  for (int64_t i : index) {
    if (i < 0 || static_cast<size_t>(i) >= s->tuple_shapes.size()) return nullptr;
    s = &s->tuple_shapes[static_cast<size_t>(i)];
  }
  return s;
}

// Everything a module's buffer assignment says about its logical buffers, indexed.
struct Buffers {
  const HloModule& module;
  const BufferAssignment& ba;
  std::unordered_map<int64_t, size_t> by_id;  // logical buffer id -> index in ba.logical_buffers
  std::vector<int64_t> allocation_of;         // per logical buffer: index into ba.allocations, -1
  std::vector<const HloInstruction*> instruction;  // per logical buffer, nullptr when not found

  Buffers(const HloModule& m, const BufferAssignment& b) : module(m), ba(b) {
    by_id.reserve(b.logical_buffers.size());
    for (size_t i = 0; i < b.logical_buffers.size(); ++i) by_id.emplace(b.logical_buffers[i].id, i);
    allocation_of.assign(b.logical_buffers.size(), -1);
    for (size_t a = 0; a < b.allocations.size(); ++a)
      for (const auto& as : b.allocations[a].assigned)
        if (auto it = by_id.find(as.logical_buffer_id); it != by_id.end())
          allocation_of[it->second] = static_cast<int64_t>(a);
    instruction.reserve(b.logical_buffers.size());
    for (const LogicalBuffer& lb : b.logical_buffers) {
      const HloInstruction* instr = nullptr;
      if (lb.has_instruction_id) {
        if (auto it = m.instruction_by_id.find(lb.instruction_id); it != m.instruction_by_id.end())
          instr = &m.instructions[it->second];
      }
      if (!instr && !lb.instruction_name.empty()) instr = m.find(lb.instruction_name);
      instruction.push_back(instr);
    }
  }

  const LogicalBuffer* find(int64_t id) const {
    auto it = by_id.find(id);
    return it == by_id.end() ? nullptr : &ba.logical_buffers[it->second];
  }
  size_t index(const LogicalBuffer* lb) const {
    return static_cast<size_t>(lb - ba.logical_buffers.data());
  }

  StaticBuffer describe(size_t i, int64_t bytes, const char* kind) const {
    const LogicalBuffer& lb = ba.logical_buffers[i];
    StaticBuffer out;
    out.logical_buffer_id = lb.id;
    out.bytes = bytes;
    out.kind = kind;
    const HloInstruction* instr = instruction[i];
    std::string index;
    if (!lb.shape_index.empty()) {
      index = "{";
      for (size_t k = 0; k < lb.shape_index.size(); ++k)
        index += (k ? "," : "") + std::to_string(lb.shape_index[k]);
      index += "}";
    }
    if (!instr) {
      out.instruction = lb.instruction_name.empty()
                            ? fmt::format("(instruction {})", lb.instruction_id)
                            : std::string(lb.instruction_name);
      out.instruction += index;
      return out;
    }
    out.instruction = std::string(instr->name) + index;
    out.opcode = std::string(instr->opcode);
    if (const HloShape* s = shape_at(instr->shape, lb.shape_index)) out.shape = s->to_string();
    out.op_name = std::string(instr->op_name);
    out.source = module.source_line(*instr);
    return out;
  }
};

// Replays a heap simulator trace as XProf's memory viewer does: ALLOC adds a buffer, FREE drops
// it when the last buffer sharing its memory is freed, SHARE_WITH makes a buffer use another's
// memory (bringing it back when that one was already freed). Reference counts live on the
// canonical buffer at the root of each sharing chain.
class HeapReplay {
 public:
  explicit HeapReplay(const Buffers& b) : b_(b) {
    canonical_.assign(b.ba.logical_buffers.size(), kNone);
    refs_.assign(b.ba.logical_buffers.size(), 0);
  }

  // Runs events [0, upto) (all when upto is the trace size). False, with `error` set, when the
  // trace cannot be replayed.
  bool run(const HeapSimulatorTrace& t, size_t upto, std::string& error) {
    for (size_t k = 0; k < upto; ++k) {
      const HeapSimulatorEvent& e = t.events[k];
      const LogicalBuffer* lb = b_.find(e.buffer_id);
      if (!lb) continue;  // as XProf: an unknown buffer changes nothing
      const size_t i = b_.index(lb);
      if (e.kind == HeapSimulatorEvent::kAlloc) {
        ++refs_[root(i)];
        grow(i, k);
      } else if (e.kind == HeapSimulatorEvent::kFree) {
        const size_t r = root(i);
        if (--refs_[r] < 0) {
          error = fmt::format("buffer {} is freed more often than it is allocated", lb->id);
          return false;
        }
        if (refs_[r] == 0) {
          size_t bytes = static_cast<size_t>(std::max<int64_t>(b_.ba.logical_buffers[r].size, 0));
          if (bytes > heap_) {
            error = "the heap size goes below zero";
            return false;
          }
          heap_ -= bytes;
          live_.erase(r);
        }
      } else if (e.kind == HeapSimulatorEvent::kShareWith) {
        const LogicalBuffer* c = b_.find(e.share_with_canonical_id);
        if (!c) continue;
        const size_t ci = b_.index(c);
        if (root(ci) == i) continue;  // a corrupt trace sharing with itself
        canonical_[i] = ci;
        const size_t r = root(ci);
        if (++refs_[r] == 1) {  // the shared memory was freed: it comes back, used by i
          display_[r] = i;
          grow(r, k);
        }
      } else {
        error = fmt::format("unknown heap simulator event kind {}", e.kind);
        return false;
      }
    }
    return true;
  }

  uint64_t peak() const { return peak_; }
  size_t peak_position() const { return peak_at_; }
  const std::set<size_t>& live() const { return live_; }
  // The buffer shown for a live canonical buffer: the one that shares its memory now, if any.
  size_t shown(size_t r) const {
    auto it = display_.find(r);
    return it == display_.end() ? r : it->second;
  }

 private:
  static constexpr size_t kNone = SIZE_MAX;
  size_t root(size_t i) const {
    // Chains are short; a corrupt trace could loop, so the walk is bounded.
    for (size_t steps = 0; canonical_[i] != kNone && steps < canonical_.size(); ++steps)
      i = canonical_[i];
    return i;
  }
  void grow(size_t i, size_t k) {
    heap_ += static_cast<uint64_t>(std::max<int64_t>(b_.ba.logical_buffers[i].size, 0));
    live_.insert(i);
    if (heap_ > peak_) {
      peak_ = heap_;
      peak_at_ = k;
    }
  }

  const Buffers& b_;
  std::vector<size_t> canonical_;
  std::vector<int64_t> refs_;
  std::unordered_map<size_t, size_t> display_;
  std::set<size_t> live_;
  uint64_t heap_ = 0, peak_ = 0;
  size_t peak_at_ = 0;
};

// XProf's choice of the heap simulator trace for a memory space: the trace of a temporary
// allocation of that color (a trace belongs to the allocation of its first event's buffer), else
// the trace with the most events on buffers of that color.
std::optional<size_t> pick_trace(const Buffers& b, int64_t color, size_t& candidates) {
  const BufferAssignment& ba = b.ba;
  std::optional<size_t> best;
  candidates = 0;
  size_t best_events = 0;
  for (size_t t = 0; t < ba.heap_traces.size(); ++t) {
    const HeapSimulatorTrace& trace = ba.heap_traces[t];
    if (trace.events.empty()) continue;
    const LogicalBuffer* first = b.find(trace.events.front().buffer_id);
    if (!first) continue;
    int64_t a = b.allocation_of[b.index(first)];
    if (a < 0 || ba.allocations[a].color != color || ba.allocations[a].indefinite() ||
        ba.allocations[a].is_thread_local)
      continue;
    ++candidates;
    if (!best || trace.events.size() > best_events) {
      best = t;
      best_events = trace.events.size();
    }
  }
  if (best) return best;
  for (size_t t = 0; t < ba.heap_traces.size(); ++t) {
    size_t events = 0;
    for (const HeapSimulatorEvent& e : ba.heap_traces[t].events)
      if (const LogicalBuffer* lb = b.find(e.buffer_id); lb && lb->color == color) ++events;
    if (events > best_events) {
      best = t;
      best_events = events;
    }
  }
  return best;
}

MemorySpaceUsage space_usage(const Buffers& b, int64_t color, const StaticMemoryOptions& o,
                             std::vector<std::string>& notes) {
  const BufferAssignment& ba = b.ba;
  MemorySpaceUsage u;
  u.color = color;
  u.label = space_label(color);
  std::vector<StaticBuffer> at_peak;
  for (const BufferAllocation& a : ba.allocations) {
    if (a.color != color) continue;
    const auto size = static_cast<uint64_t>(std::max<int64_t>(a.size, 0));
    ++u.allocations;
    if (!a.is_thread_local) u.total_allocation_bytes += size;
    if (a.is_entry_computation_parameter) u.argument_bytes += size;
    if (a.maybe_live_out) u.output_bytes += size;
    if (a.is_entry_computation_parameter && a.maybe_live_out) u.alias_bytes += size;
    if (a.preallocated_temp()) u.temp_bytes += size;
    if (a.is_constant) u.constant_bytes += size;
    if (a.is_thread_local) u.thread_local_bytes += size;
    if (!a.indefinite()) continue;
    // Shown by its largest logical buffer; an allocation holding none counts for nothing (as in
    // XProf's memory viewer).
    std::optional<size_t> largest;
    for (const auto& as : a.assigned) {
      const LogicalBuffer* lb = b.find(as.logical_buffer_id);
      if (lb && lb->size > 0 && (!largest || lb->size > ba.logical_buffers[*largest].size))
        largest = b.index(lb);
    }
    if (!largest) continue;
    u.indefinite_bytes += size;
    // XLA does not place indefinite buffers of other memory spaces (such as TPU VMEM): only the
    // device memory lists them.
    if (color == 0)
      at_peak.push_back(b.describe(*largest, static_cast<int64_t>(size), allocation_kind(a)));
  }

  size_t candidates = 0;
  std::optional<size_t> trace = pick_trace(b, color, candidates);
  if (candidates > 1)
    notes.push_back(
        fmt::format("{}: {} heap simulator traces for temporaries; the peak is that of the longest",
                    u.label, candidates));
  if (!trace) {
    if (u.temp_bytes == 0) {
      u.heap_simulator_peak_bytes = 0;
    } else {
      notes.push_back(fmt::format(
          "{}: no heap simulator trace for the {} bytes of temporaries: the peak heap is unknown",
          u.label, u.temp_bytes));
    }
  } else {
    const HeapSimulatorTrace& t = ba.heap_traces[*trace];
    HeapReplay whole(b);
    std::string error;
    if (!whole.run(t, t.events.size(), error)) {
      notes.push_back(fmt::format("{}: heap simulator trace not replayed: {}", u.label, error));
    } else {
      u.heap_simulator_peak_bytes = whole.peak();
      if (whole.peak() > 0) {
        u.peak_instruction = std::string(t.events[whole.peak_position()].instruction_name);
        // Replayed again up to the peak for what is live there (cheaper than copying the live
        // set at every new high).
        HeapReplay upto(b);
        upto.run(t, whole.peak_position() + 1, error);
        for (size_t r : upto.live())
          at_peak.push_back(b.describe(upto.shown(r), ba.logical_buffers[r].size, "temporary"));
      }
    }
  }
  if (u.heap_simulator_peak_bytes)
    u.peak_heap_bytes = *u.heap_simulator_peak_bytes + u.indefinite_bytes;
  u.buffers_at_peak = at_peak.size();
  std::stable_sort(
      at_peak.begin(), at_peak.end(), [](const StaticBuffer& x, const StaticBuffer& y) {
        return x.bytes != y.bytes ? x.bytes > y.bytes : x.logical_buffer_id < y.logical_buffer_id;
      });
  if (o.top && at_peak.size() > o.top) at_peak.resize(o.top);
  u.largest_at_peak = std::move(at_peak);
  return u;
}

ProgramMemory program_memory(const HloModule& m, const StaticMemoryOptions& o) {
  ProgramMemory out;
  out.module = std::string(m.name);
  out.program_id = m.program_id;
  BufferAssignment ba;
  try {
    ba = parse_buffer_assignment(m.buffer_assignment);
  } catch (const InputError& e) {
    out.notes.push_back("buffer assignment not readable: " + e.reason());
    return out;
  }
  Buffers b(m, ba);
  size_t unresolved = 0;
  for (const HloInstruction* i : b.instruction) unresolved += i == nullptr;
  if (unresolved)
    out.notes.push_back(
        fmt::format("{} of {} logical buffers name an instruction the module does not have",
                    unresolved, ba.logical_buffers.size()));
  std::set<int64_t> colors;
  for (const BufferAllocation& a : ba.allocations) colors.insert(a.color);
  for (int64_t color : colors) out.spaces.push_back(space_usage(b, color, o, out.notes));
  return out;
}

}  // namespace

std::shared_ptr<const ProgramMemory> ProgramMemoryCache::get(const HloModule& m,
                                                             const StaticMemoryOptions& o) {
  const Key key{m.program_id, std::hash<std::string_view>()(m.serialized), m.serialized.size()};
  {
    std::lock_guard<std::mutex> hold(lock_);
    if (auto it = programs_.find(key); it != programs_.end()) return it->second;
  }
  auto made = std::make_shared<const ProgramMemory>(program_memory(m, o));
  std::lock_guard<std::mutex> hold(lock_);
  return programs_.emplace(key, std::move(made)).first->second;
}

std::vector<StaticMemoryModule> static_memory_modules(const HloIndex& hlo,
                                                      const StaticMemoryOptions& o,
                                                      ProgramMemoryCache* cache) {
  std::vector<StaticMemoryModule> out;
  for (const auto& m : hlo.modules()) {
    StaticMemoryModule& x = out.emplace_back();
    x.program_id = m->program_id;
    x.name = std::string(m->name);
    x.has_assignment = !m->buffer_assignment.empty();
    x.assignment_hash = std::hash<std::string_view>()(m->buffer_assignment);
    x.assignment_size = m->buffer_assignment.size();
    if (!x.has_assignment) continue;
    if (!o.module.empty() && m->name.find(o.module) == std::string_view::npos) continue;
    x.memory =
        cache ? cache->get(*m, o) : std::make_shared<const ProgramMemory>(program_memory(*m, o));
  }
  return out;
}

StaticMemory merge_static_memory(const std::vector<std::vector<StaticMemoryModule>>& hosts) {
  // The modules one index of every host would hold: a program id once (the first host's), then
  // the HLO files' modules (no program id), which every host read, once.
  std::vector<const StaticMemoryModule*> index;
  std::set<int64_t> ids;
  for (const auto& host : hosts)
    for (const StaticMemoryModule& m : host)
      if (m.program_id != HloIndex::kUnknownProgramId && ids.insert(m.program_id).second)
        index.push_back(&m);
  if (!hosts.empty())
    for (const StaticMemoryModule& m : hosts.front())
      if (m.program_id == HloIndex::kUnknownProgramId) index.push_back(&m);

  StaticMemory result;
  std::vector<const StaticMemoryModule*> modules;
  for (const StaticMemoryModule* m : index) {
    if (!m->has_assignment) {
      ++result.modules_without_assignment;
      continue;
    }
    if (m->memory) modules.push_back(m);  // none: --module leaves it out
  }
  // An HLO file passed beside a profile may repeat a program the profile carries: profile copies
  // (with a program id) first, so that a file's duplicate is the one dropped.
  std::stable_sort(modules.begin(), modules.end(),
                   [](const StaticMemoryModule* x, const StaticMemoryModule* y) {
                     return (x->program_id == -1) < (y->program_id == -1);
                   });
  std::set<std::tuple<std::string_view, uint64_t, size_t>> seen;
  for (const StaticMemoryModule* m : modules)
    if (seen.insert({m->name, m->assignment_hash, m->assignment_size}).second)
      result.programs.push_back(*m->memory);
  std::stable_sort(result.programs.begin(), result.programs.end(),
                   [](const ProgramMemory& x, const ProgramMemory& y) {
                     if (x.module != y.module) return x.module < y.module;
                     return static_cast<uint64_t>(x.program_id) <
                            static_cast<uint64_t>(y.program_id);
                   });
  return result;
}

StaticMemory compute_static_memory(const HloIndex& hlo, const StaticMemoryOptions& o) {
  return merge_static_memory({static_memory_modules(hlo, o)});
}

}  // namespace jaxprof
