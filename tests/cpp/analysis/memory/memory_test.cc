// jaxprof memory on real profiles and on buffer assignments written here field by field.
// Expected peaks: the allocators' own statistics (bytes_allocated, peak_bytes_in_use) as a
// separate protobuf decoder reads them, and XProf 2.24's memory_profile and memory_viewer tools
// run on the same files (tests/python/memory/test_memory.py compares against XProf where it installs).
#include "jaxprof/analysis/memory/memory.h"

#include <gtest/gtest.h>

#include <map>

#include "jaxprof/common/parallel_parts.h"
#include "jaxprof/common/error.h"
#include "jaxprof/formats/load.h"
#include "jaxprof/model/buffer_assignment.h"
#include "jaxprof/render/html/memory_chart.h"
#include "jaxprof/render/text/memory_render.h"
#include "jaxprof/common/units.h"
#include "test_paths.h"

namespace jaxprof {
namespace {

using testing::fixture;
using testing::test_data;

const AllocatorMemory& allocator(const MemoryTimeline& t, std::string_view name) {
  for (const AllocatorMemory& a : t.allocators)
    if (a.allocator == name) return a;
  throw std::runtime_error("no allocator " + std::string(name));
}

const MemorySpaceUsage& space(const StaticMemory& s, std::string_view module, int64_t program,
                              int64_t color = 0) {
  for (const ProgramMemory& p : s.programs)
    if (p.module == module && p.program_id == program)
      for (const MemorySpaceUsage& u : p.spaces)
        if (u.color == color) return u;
  throw std::runtime_error("no program " + std::string(module));
}

TEST(MemoryTimeline, Mi300xConvPeaksAreTheAllocatorsOwn) {
  LoadedProfile lp;
  load_profile({fixture("xplane/mi300x_jax_conv.xplane.pb")}, {}, lp);
  MemoryTimeline t = compute_memory_timeline(lp.profile, {});
  EXPECT_EQ(t.events, 230u);
  ASSERT_EQ(t.allocators.size(), 8u);
  for (size_t i = 0; i < 8; ++i) {
    const AllocatorMemory& a = t.allocators[i];
    EXPECT_EQ(a.allocator, "GPU_" + std::to_string(i) + "_bfc");
    EXPECT_EQ(a.device, "GPU:" + std::to_string(i));
    EXPECT_EQ(a.memory_space, "device");
    // The capture set each allocator's lifetime peak: the highest bytes_allocated equals the
    // final peak_bytes_in_use.
    const int64_t peak = i == 0 ? 1730171904 : 1732169984;
    EXPECT_EQ(a.peak_bytes_in_use, peak);
    EXPECT_EQ(a.lifetime_peak_bytes_in_use, peak);
    EXPECT_EQ(a.peak_in_capture, true);
    EXPECT_EQ(a.capacity_bytes, 154606239744);
    EXPECT_TRUE(a.notes.empty()) << a.notes.front();
    // The peak is the second conv output; what the capture did not allocate is
    // jit_forward_3d_conv's parameters and output from the warm-up run (as
    // `allocated_before_capture_bytes`).
    EXPECT_EQ(a.live_at_peak_bytes + *a.allocated_before_capture_bytes,
              static_cast<uint64_t>(peak));
  }
  EXPECT_EQ(t.allocators[0].fragmentation_at_peak, 0.419346);
  EXPECT_EQ(t.allocators[0].allocations + t.allocators[0].deallocations, 20u);
}

TEST(MemoryTimeline, Mi300xGemmPeakBeforeTheCapture) {
  LoadedProfile lp;
  load_profile({fixture("xplane/mi300x_jax_gemm.xplane.pb")}, {}, lp);
  MemoryTimeline t = compute_memory_timeline(lp.profile, {});
  const AllocatorMemory& gpu = allocator(t, "GPU_0_bfc");
  EXPECT_EQ(gpu.peak_bytes_in_use, 482345216);
  EXPECT_EQ(gpu.lifetime_peak_bytes_in_use, 738197504);
  EXPECT_EQ(gpu.peak_in_capture, false);
  EXPECT_EQ(gpu.live_at_peak, 5u);
  EXPECT_EQ(gpu.live_at_peak_bytes, 482345216u);
  EXPECT_EQ(gpu.allocated_before_capture_bytes, 0);
  const AllocatorMemory& host = allocator(t, "xla_gpu_host_bfc");
  EXPECT_EQ(host.device, "host");
  EXPECT_EQ(host.memory_space, "host");
  EXPECT_EQ(host.peak_bytes_in_use, 256);
  // Devices come before host memory.
  EXPECT_EQ(t.allocators.front().allocator, "GPU_0_bfc");
}

TEST(MemoryTimeline, TpuReservedBytesAndDeviceOrdinals) {
  LoadedProfile lp;
  load_profile({fixture("xplane/tpu_4chip_inference.xplane.pb")}, {}, lp);
  MemoryTimeline t = compute_memory_timeline(lp.profile, {});
  ASSERT_EQ(t.allocators.size(), 4u);
  const AllocatorMemory& d0 = t.allocators[0];
  EXPECT_EQ(d0.allocator, "device 0");  // the events name it by index_on_host
  EXPECT_EQ(d0.device, "TPU:0");
  EXPECT_EQ(d0.peak_bytes_in_use, 16106341504);
  EXPECT_EQ(d0.lifetime_peak_bytes_in_use, 16106341504);
  EXPECT_EQ(d0.peak_with_reserved, 21492569216);  // XProf's memory profile peak
  EXPECT_EQ(t.allocators[1].peak_bytes_in_use, 10737555584);
  EXPECT_EQ(t.allocators[1].peak_with_reserved, 21492671104);
  // The TPU runtime names the op and shape of some allocations.
  bool named = false;
  for (const LiveAllocationGroup& g : d0.largest_at_peak) named |= g.op == "dummy";
  EXPECT_TRUE(named);
}

TEST(MemoryTimeline, TensorflowOpsShapesAndDtypes) {
  LoadedProfile lp;
  load_profile({fixture("xplane/tf_v100_8gpu_training.xplane.pb")}, {}, lp);
  MemoryOptions o;
  o.timeline.top = 0;
  MemoryTimeline t = compute_memory_timeline(lp.profile, o.timeline);
  const AllocatorMemory& gpu4 = allocator(t, "GPU_4_bfc");
  EXPECT_EQ(gpu4.peak_bytes_in_use, 6208853760);
  // The running maximum of peak_bytes_in_use (the last event in time); XProf reports the value
  // of the last event of the last thread it reads instead (5006386688 here).
  EXPECT_EQ(gpu4.lifetime_peak_bytes_in_use, 6208853760);
  EXPECT_EQ(gpu4.largest_at_peak.size(), gpu4.live_groups);
  uint64_t bytes = 0, count = 0;
  for (const LiveAllocationGroup& g : gpu4.largest_at_peak) {
    bytes += g.bytes;
    count += g.count;
  }
  EXPECT_EQ(bytes, gpu4.live_at_peak_bytes);
  EXPECT_EQ(count, gpu4.live_at_peak);
  const LiveAllocationGroup& top = gpu4.largest_at_peak.front();
  EXPECT_EQ(top.shape, "[30522,1024]");
  EXPECT_EQ(top.dtype, "half");
  EXPECT_EQ(top.region, "output");
  EXPECT_EQ(top.bytes, 62509056u);  // 30522 x 1024 halves
  EXPECT_EQ(top.requested_bytes, 62509056u);
  EXPECT_EQ(allocator(t, "gpu_host_bfc").peak_in_capture, false);
}

TEST(MemoryTimeline, SamplingKeepsThePeak) {
  LoadedProfile lp;
  load_profile({fixture("xplane/mi300x_jax_gemm.xplane.pb")}, {}, lp);
  MemoryTimelineOptions o;
  o.max_points = 7;
  MemoryTimeline t = compute_memory_timeline(lp.profile, o);
  const AllocatorMemory& gpu = allocator(t, "GPU_0_bfc");
  EXPECT_EQ(gpu.timeline.size(), 7u);
  EXPECT_EQ(gpu.timeline_events, 138u);
  bool peak = false;
  for (const MemoryPoint& p : gpu.timeline) peak |= p.in_use == *gpu.peak_bytes_in_use;
  EXPECT_TRUE(peak);
  o.max_points = 0;
  EXPECT_EQ(allocator(compute_memory_timeline(lp.profile, o), "GPU_0_bfc").timeline.size(), 138u);
}

TEST(MemoryTimeline, CpuBackendHasNoAllocatorEvents) {
  LoadedProfile lp;
  load_profile({test_data("jax_cpu_8dev/plugins/profile/session/vm.xplane.pb")}, {}, lp);
  MemoryTimeline t = compute_memory_timeline(lp.profile, {});
  EXPECT_EQ(t.events, 0u);
  EXPECT_TRUE(t.allocators.empty());
  EXPECT_NE(t.no_events_reason.find("no allocator events"), std::string::npos);
}

TEST(MemoryTimeline, SameResultForAnyNumberOfThreads) {
  LoadedProfile lp;
  load_profile({fixture("xplane/tf_v100_8gpu_training.xplane.pb")}, {}, lp);
  MemoryOptions o;
  const std::string one = [&] {
    analysis_threads.store({.threads = 1});
    return render_memory(compute_memory(lp.profile, o), OutputFormat::kJson);
  }();
  analysis_threads.store({.threads = 3, .split_small_work = true});
  const std::string three = render_memory(compute_memory(lp.profile, o), OutputFormat::kJson);
  analysis_threads.store({});
  EXPECT_EQ(one, three);
}

// XProf's memory viewer on the conv fixture: peak heap 1104.4921875 MiB for jit_forward_3d_conv,
// 97.50006103515625 MiB for jit__multi_slice, 48.7500114440918 MiB for jit__normal(9).
TEST(StaticMemory, Mi300xConvMatchesXprofMemoryViewer) {
  LoadedProfile lp;
  load_profile({fixture("xplane/mi300x_jax_conv.xplane.pb")}, {}, lp);
  StaticMemory s = compute_static_memory(lp.profile.hlo, {});
  EXPECT_EQ(s.programs.size(), 8u);
  const MemorySpaceUsage& conv = space(s, "jit_forward_3d_conv", 15);
  EXPECT_EQ(conv.peak_heap_bytes, 1158144000u);
  EXPECT_EQ(conv.argument_bytes, 7045120u);
  EXPECT_EQ(conv.output_bytes, 572026880u);
  EXPECT_EQ(conv.temp_bytes, 579072256u);
  EXPECT_EQ(conv.heap_simulator_peak_bytes, 579072000u);
  EXPECT_EQ(conv.peak_instruction, "cudnn-conv.1");
  ASSERT_FALSE(conv.largest_at_peak.empty());
  const StaticBuffer& top = conv.largest_at_peak.front();
  EXPECT_EQ(top.bytes, 572026880);
  EXPECT_EQ(space(s, "jit__multi_slice", 13).peak_heap_bytes, 102236224u);
  EXPECT_EQ(space(s, "jit__normal", 9).peak_heap_bytes, 51118092u);
  // The convolution's workspace-carrying output, with its JAX op and source line.
  bool conv_buffer = false;
  for (const StaticBuffer& b : conv.largest_at_peak)
    if (b.instruction == "cudnn-conv.1{0}") {
      conv_buffer = true;
      EXPECT_EQ(b.shape, "bf16[1,5120,34,31,53]");
      EXPECT_EQ(b.opcode, "custom-call");
      EXPECT_EQ(b.op_name, "jit(forward_3d_conv)/conv_general_dilated");
      EXPECT_EQ(b.source, "/workspace/traces/generate_conv_trace.py:23");
      EXPECT_EQ(b.kind, "temporary");
    }
  EXPECT_TRUE(conv_buffer);
}

// --- Buffer assignments written field by field --------------------------------------------------

// A protobuf writer just big enough for the messages below.
struct Proto {
  std::string bytes;
  Proto& varint(uint32_t field, uint64_t v) {
    key(field, 0);
    put(v);
    return *this;
  }
  Proto& str(uint32_t field, std::string_view s) {
    key(field, 2);
    put(s.size());
    bytes += s;
    return *this;
  }
  Proto& msg(uint32_t field, const Proto& m) { return str(field, m.bytes); }

 private:
  void key(uint32_t field, int type) { put((uint64_t{field} << 3) | type); }
  void put(uint64_t v) {
    while (v >= 0x80) {
      bytes += static_cast<char>((v & 0x7f) | 0x80);
      v >>= 7;
    }
    bytes += static_cast<char>(v);
  }
};

Proto f32_shape(int64_t elements) { return Proto().varint(2, 11).varint(3, elements); }

Proto instruction(int64_t id, std::string_view name, int64_t elements, std::string_view op_name) {
  Proto i;
  i.str(1, name)
      .str(2, id == 1 ? "parameter" : "fusion")
      .msg(3, f32_shape(elements))
      .varint(35, id);
  if (!op_name.empty()) i.msg(7, Proto().str(2, op_name).str(3, "toy.py").varint(4, 7));
  return i;
}

Proto logical_buffer(int64_t id, int64_t size, int64_t instruction) {
  return Proto().varint(1, id).varint(2, size).msg(3, Proto().varint(4, instruction));
}

Proto event(int kind, int64_t buffer, std::string_view at, int64_t share_with = 0) {
  Proto e;
  e.varint(1, kind).varint(2, buffer).str(4, at);
  if (share_with) e.varint(5, share_with);
  return e;
}

// Module jit_toy: p (f32[256], argument), a (f32[1024]), b and c (f32[512], c shares b's memory),
// out (f32[128], output); the temporaries in one allocation whose heap the trace describes.
std::pair<Proto, Proto> toy_module(const std::vector<Proto>& events) {
  Proto comp;
  comp.str(1, "main").varint(5, 1);
  comp.msg(2, instruction(1, "p", 256, ""));
  comp.msg(2, instruction(2, "a", 1024, "jit(toy)/add"));
  comp.msg(2, instruction(3, "b", 512, "jit(toy)/mul"));
  comp.msg(2, instruction(4, "c", 512, "jit(toy)/reshape"));
  comp.msg(2, instruction(5, "out", 128, "jit(toy)/sum"));
  Proto module;
  module.str(1, "jit_toy").msg(3, comp).varint(5, 1).varint(6, 1);
  Proto ba;
  ba.msg(1, logical_buffer(1, 1024, 1)).msg(1, logical_buffer(2, 4096, 2));
  ba.msg(1, logical_buffer(3, 2048, 3)).msg(1, logical_buffer(4, 2048, 4));
  ba.msg(1, logical_buffer(5, 512, 5));
  auto assigned = [](int64_t lb, int64_t offset, int64_t size) {
    return Proto().varint(1, lb).varint(2, offset).varint(3, size);
  };
  ba.msg(3, Proto().varint(1, 0).varint(2, 1024).varint(5, 1).msg(9, assigned(1, 0, 1024)));
  ba.msg(3, Proto().varint(1, 1).varint(2, 512).varint(7, 1).msg(9, assigned(5, 0, 512)));
  ba.msg(3, Proto()
                .varint(1, 2)
                .varint(2, 6144)
                .msg(9, assigned(2, 0, 4096))
                .msg(9, assigned(3, 4096, 2048))
                .msg(9, assigned(4, 4096, 2048)));
  Proto trace;
  for (const Proto& e : events) trace.msg(1, e);
  ba.msg(4, trace);
  return {module, ba};
}

std::string toy_hlo(const std::vector<Proto>& events) {
  auto [module, ba] = toy_module(events);
  return Proto().msg(1, module).msg(3, ba).bytes;
}

enum { kAlloc = 0, kFree = 1, kShare = 2 };

TEST(StaticMemory, HeapReplayWithSharing) {
  // a and b live together (the peak), then a goes; c shares b's memory and goes last.
  std::string bytes =
      toy_hlo({event(kAlloc, 2, "a"), event(kAlloc, 3, "b"), event(kFree, 2, "b"),
               event(kShare, 4, "c", 3), event(kFree, 3, "c"), event(kFree, 4, "out")});
  HloIndex index;
  index.add(bytes, 1);
  StaticMemory s = compute_static_memory(index, {});
  ASSERT_EQ(s.programs.size(), 1u);
  EXPECT_TRUE(s.programs[0].notes.empty()) << s.programs[0].notes.front();
  const MemorySpaceUsage& u = space(s, "jit_toy", 1);
  EXPECT_EQ(u.argument_bytes, 1024u);
  EXPECT_EQ(u.output_bytes, 512u);
  EXPECT_EQ(u.temp_bytes, 6144u);
  EXPECT_EQ(u.indefinite_bytes, 1536u);
  EXPECT_EQ(u.heap_simulator_peak_bytes, 6144u);
  EXPECT_EQ(u.peak_heap_bytes, 7680u);
  EXPECT_EQ(u.peak_instruction, "b");
  ASSERT_EQ(u.largest_at_peak.size(), 4u);
  EXPECT_EQ(u.largest_at_peak[0].instruction, "a");
  EXPECT_EQ(u.largest_at_peak[0].kind, "temporary");
  EXPECT_EQ(u.largest_at_peak[0].shape, "f32[1024]");
  EXPECT_EQ(u.largest_at_peak[0].op_name, "jit(toy)/add");
  EXPECT_EQ(u.largest_at_peak[0].source, "toy.py:7");
  EXPECT_EQ(u.largest_at_peak[1].instruction, "b");
  EXPECT_EQ(u.largest_at_peak[2].kind, "argument");
  EXPECT_EQ(u.largest_at_peak[3].kind, "output");
}

TEST(StaticMemory, SharingFreedMemoryBringsItBack) {
  // b is freed, then c takes its memory back: the peak (with a) shows c, the buffer in use.
  std::string bytes =
      toy_hlo({event(kAlloc, 3, "b"), event(kFree, 3, "b"), event(kShare, 4, "c", 3),
               event(kAlloc, 2, "a"), event(kFree, 2, "a"), event(kFree, 4, "out")});
  HloIndex index;
  index.add(bytes, 1);
  StaticMemory s = compute_static_memory(index, {});
  const MemorySpaceUsage& u = space(s, "jit_toy", 1);
  EXPECT_EQ(u.heap_simulator_peak_bytes, 6144u);
  ASSERT_EQ(u.largest_at_peak.size(), 4u);
  EXPECT_EQ(u.largest_at_peak[1].instruction, "c");
  EXPECT_EQ(u.largest_at_peak[1].bytes, 2048);
}

TEST(StaticMemory, BadTraceGivesANoteNotANumber) {
  std::string bytes = toy_hlo({event(kAlloc, 2, "a"), event(kFree, 2, "a"), event(kFree, 2, "a")});
  HloIndex index;
  index.add(bytes, 1);
  StaticMemory s = compute_static_memory(index, {});
  const MemorySpaceUsage& u = space(s, "jit_toy", 1);
  EXPECT_FALSE(u.peak_heap_bytes.has_value());
  EXPECT_EQ(u.argument_bytes, 1024u);  // what does not depend on the trace is still known
  ASSERT_EQ(s.programs[0].notes.size(), 1u);
  EXPECT_NE(s.programs[0].notes[0].find("freed more often"), std::string::npos);
}

TEST(StaticMemory, CorruptAssignmentIsANote) {
  // The buffer assignment cut short: its last length prefix runs past the end.
  auto [module, ba] = toy_module({event(kAlloc, 2, "a")});
  std::string bytes = Proto().msg(1, module).str(3, ba.bytes.substr(0, ba.bytes.size() - 3)).bytes;
  HloIndex index;
  index.add(bytes, 1);
  StaticMemory s = compute_static_memory(index, {});
  ASSERT_EQ(s.programs.size(), 1u);
  EXPECT_TRUE(s.programs[0].spaces.empty());
  ASSERT_EQ(s.programs[0].notes.size(), 1u);
  EXPECT_NE(s.programs[0].notes[0].find("not readable"), std::string::npos);
  EXPECT_THROW(parse_buffer_assignment(std::string_view("\x0a\xff", 2)), InputError);
}

TEST(MemoryRender, JsonHasOnePeakPerAllocatorAndChartsMarkIt) {
  LoadedProfile lp;
  load_profile({fixture("xplane/mi300x_jax_gemm.xplane.pb")}, {}, lp);
  MemoryResult r = compute_memory(lp.profile, {});
  std::string json = render_memory(r, OutputFormat::kJson);
  EXPECT_NE(json.find("\"peak_bytes_in_use\": 482345216"), std::string::npos);
  EXPECT_NE(json.find("\"lifetime_peak_bytes_in_use\": 738197504"), std::string::npos);
  std::vector<std::string> charts = svg_memory_timelines(r.timeline);
  ASSERT_EQ(charts.size(), 2u);
  // Labelled in the one number format (common/units.h).
  EXPECT_NE(charts[0].find("peak " + human_bytes(482345216)), std::string::npos);
  EXPECT_NE(charts[0].find("peak before the capture " + human_bytes(738197504)),
            std::string::npos);
}

}  // namespace
}  // namespace jaxprof
