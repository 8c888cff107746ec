// HloIndex against the HloProtos that real JAX profiles carry in their /host:metadata plane, plus
// hand-encoded protos for the wire forms the fixtures do not use and for corrupt input. The
// expected values were read independently with the protobuf Python runtime.
#include "jaxprof/model/hlo_index.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "jaxprof/common/error.h"
#include "jaxprof/wire/reader.h"

namespace jaxprof {
namespace {

namespace fs = std::filesystem;
using wire::Field;
using wire::Reader;
using wire::WireType;

// ---------------------------------------------------------------------------------------------
// Fixture access

// The environment wins (to point a built binary elsewhere), then the path the build baked in,
// then the working directory (ctest runs from the project root).
fs::path project_root() {
  if (const char* env = std::getenv("JAXPROF_SOURCE_DIR"); env && *env) return env;
#ifdef JAXPROF_SOURCE_DIR
  return JAXPROF_SOURCE_DIR;
#else
  return fs::current_path();
#endif
}

fs::path fixture_dir() { return project_root() / ".." / "shared" / "fixtures" / "xplane"; }

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path.string());
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// One "Hlo Proto" stat of the /host:metadata plane.
struct HloBlob {
  int64_t map_key = 0;      // key of the XPlane.event_metadata map entry
  int64_t metadata_id = 0;  // XEventMetadata.id
  std::string_view event_name;
  std::string_view bytes;
};

// Test-only walk XSpace.planes(1) -> XPlane{name=2, event_metadata=4, stat_metadata=5} ->
// XEventMetadata{id=1, name=2, stats=5} -> XStat{metadata_id=1, str=5 | bytes=6}. Map entries are
// key=1, value=2; XStatMetadata is {id=1, name=2}.
std::vector<HloBlob> hlo_protos_in_xspace(std::string_view space) {
  const auto* origin = reinterpret_cast<const uint8_t*>(space.data());
  std::vector<HloBlob> out;
  Reader spr(space, origin);
  Field pf;
  while (spr.next(pf)) {
    if (pf.number != 1) continue;
    std::string_view plane_name;
    std::vector<std::pair<HloBlob, int64_t>> candidates;  // blob, stat metadata id
    std::map<int64_t, std::string_view> stat_names;
    Reader pr(pf.bytes, origin);
    Field f;
    while (pr.next(f)) {
      if (f.number == 2) plane_name = f.bytes;
      if (f.number != 4 && f.number != 5) continue;
      int64_t key = 0;
      std::string_view value;
      Reader er(f.bytes, origin);
      Field ef;
      while (er.next(ef)) {
        if (ef.number == 1) key = ef.as_int64();
        if (ef.number == 2) value = ef.bytes;
      }
      Reader vr(value, origin);
      Field vf;
      if (f.number == 5) {
        while (vr.next(vf))
          if (vf.number == 2) stat_names[key] = vf.bytes;
        continue;
      }
      HloBlob blob;
      blob.map_key = key;
      std::vector<std::pair<int64_t, std::string_view>> stats;
      while (vr.next(vf)) {
        if (vf.number == 1) blob.metadata_id = vf.as_int64();
        if (vf.number == 2) blob.event_name = vf.bytes;
        if (vf.number != 5) continue;
        int64_t stat_id = 0;
        std::string_view payload;
        Reader st(vf.bytes, origin);
        Field sf;
        while (st.next(sf)) {
          if (sf.number == 1) stat_id = sf.as_int64();
          if (sf.number == 5 || sf.number == 6) payload = sf.bytes;
        }
        stats.emplace_back(stat_id, payload);
      }
      for (auto& [stat_id, payload] : stats) {
        HloBlob b = blob;
        b.bytes = payload;
        candidates.emplace_back(b, stat_id);
      }
    }
    if (plane_name != "/host:metadata") continue;
    // stat_metadata may come after event_metadata, so filter only once the plane is read.
    for (auto& [blob, stat_id] : candidates) {
      auto it = stat_names.find(stat_id);
      if (it != stat_names.end() && it->second == "Hlo Proto") out.push_back(blob);
    }
  }
  return out;
}

struct Loaded {
  std::string bytes;  // owns what the index's string views point into
  std::vector<HloBlob> blobs;
  HloIndex index;
};

// Loads and indexes a fixture once per test binary run. Returns nullptr only when the shared
// fixture tree is absent altogether (a checkout without ../shared).
const Loaded* load(const std::string& name) {
  static std::map<std::string, std::unique_ptr<Loaded>> cache;
  auto it = cache.find(name);
  if (it != cache.end()) return it->second.get();
  if (!fs::exists(fixture_dir())) return nullptr;
  auto l = std::make_unique<Loaded>();
  l->bytes = read_file(fixture_dir() / name);
  l->blobs = hlo_protos_in_xspace(l->bytes);
  for (const HloBlob& b : l->blobs) l->index.add(b.bytes, b.map_key);
  return (cache[name] = std::move(l)).get();
}

#define LOAD_OR_SKIP(var, name)                                                  \
  const Loaded* var = load(name);                                                \
  if (!var) GTEST_SKIP() << "shared fixtures not found under " << fixture_dir(); \
  do {                                                                           \
  } while (0)

struct Totals {
  size_t modules = 0, computations = 0, instructions = 0, with_op_name = 0, with_frame = 0,
         frames = 0, called = 0;
  uint64_t shape_bytes = 0;
};

Totals totals(const HloIndex& index) {
  Totals t;
  for (const auto& m : index.modules()) {
    ++t.modules;
    t.computations += m->computations.size();
    t.frames += m->stack_frames.size();
    for (const HloInstruction& i : m->instructions) {
      ++t.instructions;
      t.with_op_name += !i.op_name.empty();
      t.with_frame += i.stack_frame_id != 0;
      t.called += i.called_computation_ids.size();
      t.shape_bytes += i.shape.byte_size();
    }
  }
  return t;
}

std::map<std::string, int> name_counts(const HloIndex& index) {
  std::map<std::string, int> out;
  for (const auto& m : index.modules()) ++out[std::string(m->name)];
  return out;
}

const HloInstruction& must_find(const HloModule& m, std::string_view name) {
  const HloInstruction* i = m.find(name);
  if (!i) throw std::runtime_error("no instruction " + std::string(name));
  return *i;
}

std::string_view computation_name(const HloModule& m, int64_t id) {
  auto it = m.computation_by_id.find(id);
  return it == m.computation_by_id.end() ? std::string_view("<none>")
                                         : m.computations[it->second].name;
}

// ---------------------------------------------------------------------------------------------
// Real fixtures

TEST(HloIndexFixtures, ProgramIdIsTheEventMetadataId) {
  // In all four JAX profiles the event-metadata map key, XEventMetadata.id and the number in the
  // entry's name "jit_dot(5)" are the program id that device events carry as `program_id`.
  for (const char* name : {"mi300x_jax_gemm.xplane.pb", "mi300x_jax_elementwise.xplane.pb",
                           "mi300x_jax_conv.xplane.pb", "tpu_4chip_inference.xplane.pb"}) {
    LOAD_OR_SKIP(l, name);
    ASSERT_FALSE(l->blobs.empty()) << name;
    for (const HloBlob& b : l->blobs) {
      EXPECT_EQ(b.map_key, b.metadata_id) << name;
      const HloModule* m = l->index.find(b.map_key, "");
      ASSERT_NE(m, nullptr) << name;
      EXPECT_EQ(m->program_id, b.map_key);
      std::string expected =
          std::string(m->name) + "(" + std::to_string(static_cast<uint64_t>(b.map_key)) + ")";
      EXPECT_EQ(b.event_name, expected) << name;
    }
  }
}

TEST(HloIndexFixtures, GemmModules) {
  LOAD_OR_SKIP(l, "mi300x_jax_gemm.xplane.pb");
  EXPECT_EQ(name_counts(l->index),
            (std::map<std::string, int>{
                {"jit_broadcast_in_dim", 9}, {"jit_convert_element_type", 1}, {"jit_dot", 6}}));
  // On GPU the module's own id is the program id.
  for (const auto& m : l->index.modules()) EXPECT_EQ(m->module_id, m->program_id);
  Totals t = totals(l->index);
  EXPECT_EQ(t.modules, 16u);
  EXPECT_EQ(t.computations, 28u);
  EXPECT_EQ(t.instructions, 68u);
  EXPECT_EQ(t.with_op_name, 52u);
  EXPECT_EQ(t.with_frame, 30u);
  EXPECT_EQ(t.frames, 45u);
  EXPECT_EQ(t.called, 12u);
  EXPECT_EQ(t.shape_bytes, 1758986280u);

  // Name lookups only resolve unique names.
  EXPECT_EQ(l->index.find(HloIndex::kUnknownProgramId, "jit_dot"), nullptr);
  const HloModule* conv = l->index.find(HloIndex::kUnknownProgramId, "jit_convert_element_type");
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(conv->program_id, 1);
  EXPECT_TRUE(conv->stack_frames.empty());  // this module carries no stack_frame_index
  // Known under program 1: a lookup for another program never borrows it.
  EXPECT_EQ(l->index.find(12345, "jit_convert_element_type"), nullptr);
  EXPECT_EQ(l->index.find(12345, "no_such_module"), nullptr);
  EXPECT_EQ(l->index.find(21, "jit_convert_element_type")->name, "jit_dot");
}

TEST(HloIndexFixtures, GemmJitDot) {
  LOAD_OR_SKIP(l, "mi300x_jax_gemm.xplane.pb");
  const HloModule* m = l->index.find(5, "");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->name, "jit_dot");
  EXPECT_EQ(m->module_id, 5);
  EXPECT_EQ(m->entry_computation_id, 1);
  EXPECT_EQ(m->computations.size(), 4u);
  EXPECT_EQ(m->instructions.size(), 10u);
  EXPECT_EQ(computation_name(*m, m->entry_computation_id), "main.1");

  const HloInstruction& fusion = must_find(*m, "gemm_fusion_dot_general.1");
  EXPECT_EQ(fusion.opcode, "fusion");
  EXPECT_EQ(fusion.id, 4294967298);
  EXPECT_EQ(fusion.op_type, "");
  EXPECT_EQ(fusion.op_name, "jit(dot)/dot_general");
  EXPECT_EQ(m->source_line(fusion), "/workspace/traces/generate_gemm_trace.py:37");
  EXPECT_EQ(fusion.shape.to_string(), "bf16[256,256]");
  EXPECT_EQ(fusion.shape.byte_size(), 131072u);
  EXPECT_EQ(fusion.called_computation_ids, std::vector<int64_t>{2});
  EXPECT_EQ(computation_name(*m, 2), "gemm_fusion_dot_general.1_computation");
  EXPECT_EQ(fusion.operand_ids, (std::vector<int64_t>{4294967296, 4294967297}));
  EXPECT_EQ(m->instructions[m->instruction_by_id.at(4294967296)].name, "a.1");
  EXPECT_EQ(m->instructions[m->instruction_by_id.at(4294967297)].name, "b.1");
  EXPECT_EQ(m->computations[fusion.computation].name, "main.1");
  EXPECT_TRUE(fusion.replica_groups.empty());

  auto stack = m->stack(fusion);
  ASSERT_EQ(stack.size(), 3u);
  EXPECT_EQ(stack.front()->file, "/workspace/traces/generate_gemm_trace.py");
  EXPECT_EQ(stack.front()->function, "run_gemms");
  EXPECT_EQ(stack.front()->line, 37);
  EXPECT_EQ(stack.front()->column, 16);
  EXPECT_EQ(stack[1]->function, "main");
  EXPECT_EQ(stack[1]->line, 76);
  EXPECT_EQ(stack.back()->function, "<module>");
  EXPECT_EQ(stack.back()->line, 96);
  EXPECT_EQ(stack.back()->column, 4);
  EXPECT_EQ(stack.back()->parent, 0);

  const HloInstruction& dot = must_find(*m, "dot_general.0");
  EXPECT_EQ(dot.opcode, "dot");
  EXPECT_EQ(m->computations[dot.computation].name, "gemm_fusion_dot_general.1_computation");
  const HloInstruction& a = must_find(*m, "a.1");
  EXPECT_EQ(a.opcode, "parameter");
  EXPECT_EQ(a.op_name, "a");
  EXPECT_EQ(m->source_line(a), "");
  EXPECT_TRUE(m->stack(a).empty());
}

TEST(HloIndexFixtures, ElementwiseReduceSum) {
  LOAD_OR_SKIP(l, "mi300x_jax_elementwise.xplane.pb");
  Totals t = totals(l->index);
  EXPECT_EQ(t.modules, 16u);
  EXPECT_EQ(t.computations, 45u);
  EXPECT_EQ(t.instructions, 640u);
  EXPECT_EQ(t.with_op_name, 556u);
  EXPECT_EQ(t.with_frame, 430u);
  EXPECT_EQ(t.frames, 41u);
  EXPECT_EQ(t.called, 30u);
  EXPECT_EQ(t.shape_bytes, 72951236797u);
  EXPECT_EQ(name_counts(l->index)["jit_add"], 2);

  const HloModule* normal = l->index.find(HloIndex::kUnknownProgramId, "jit__normal");
  ASSERT_NE(normal, nullptr);
  EXPECT_EQ(normal->program_id, 9);
  EXPECT_EQ(normal->computations.size(), 9u);
  EXPECT_EQ(normal->instructions.size(), 311u);

  const HloModule* m = l->index.find(32, "");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->name, "jit__reduce_sum");
  EXPECT_EQ(computation_name(*m, m->entry_computation_id), "main.2");
  const HloInstruction& reduce = must_find(*m, "reduce.1.1");
  EXPECT_EQ(reduce.opcode, "reduce");
  EXPECT_EQ(reduce.shape.to_string(), "f32[8192]");
  EXPECT_EQ(reduce.shape.byte_size(), 32768u);
  EXPECT_EQ(reduce.op_name, "jit(_reduce_sum)/reduce_sum");
  EXPECT_EQ(reduce.called_computation_ids, std::vector<int64_t>{1});
  EXPECT_EQ(computation_name(*m, 1), "region_0.1");
  EXPECT_EQ(m->source_line(reduce), "/workspace/traces/generate_elementwise_trace.py:31");

  const HloInstruction& convert = must_find(*m, "convert_element_type.2.1");
  EXPECT_EQ(convert.opcode, "convert");
  EXPECT_EQ(convert.shape.to_string(), "f32[8,4096,2048]");
  EXPECT_EQ(convert.shape.byte_size(), 268435456u);
  const HloInstruction& param = must_find(*m, "param_0.4");
  EXPECT_EQ(param.shape.to_string(), "bf16[8,4096,2048]");
  EXPECT_EQ(param.shape.byte_size(), 134217728u);
  const HloInstruction& scalar = must_find(*m, "convert_element_type.3.1");
  EXPECT_EQ(scalar.shape.to_string(), "bf16[]");
  EXPECT_EQ(scalar.shape.byte_size(), 2u);

  auto stack = m->stack(reduce);
  ASSERT_EQ(stack.size(), 3u);
  EXPECT_EQ(stack.front()->function, "elementwise_ops");
  EXPECT_EQ(stack.front()->line, 31);
  EXPECT_EQ(stack.front()->column, 11);
  EXPECT_EQ(stack.back()->file, "/workspace/traces/generate_elementwise_trace.py");
  EXPECT_EQ(stack.back()->function, "<module>");
  EXPECT_EQ(stack.back()->line, 89);
}

TEST(HloIndexFixtures, ConvTupleShapes) {
  LOAD_OR_SKIP(l, "mi300x_jax_conv.xplane.pb");
  Totals t = totals(l->index);
  EXPECT_EQ(t.modules, 8u);
  EXPECT_EQ(t.computations, 27u);
  EXPECT_EQ(t.instructions, 850u);
  EXPECT_EQ(t.with_op_name, 809u);
  EXPECT_EQ(t.with_frame, 638u);
  EXPECT_EQ(t.frames, 15u);
  EXPECT_EQ(t.called, 19u);
  EXPECT_EQ(t.shape_bytes, 28969421476u);
  EXPECT_EQ(name_counts(l->index)["jit__normal"], 2);
  EXPECT_EQ(l->index.find(HloIndex::kUnknownProgramId, "jit__normal"), nullptr);

  const HloModule* m = l->index.find(15, "jit_forward_3d_conv");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->name, "jit_forward_3d_conv");
  EXPECT_EQ(m->instructions.size(), 19u);
  EXPECT_EQ(computation_name(*m, m->entry_computation_id), "main.0_spmd");

  const HloInstruction& conv = must_find(*m, "cudnn-conv.1");
  EXPECT_EQ(conv.opcode, "custom-call");
  EXPECT_TRUE(conv.shape.is_tuple());
  ASSERT_EQ(conv.shape.tuple_shapes.size(), 2u);
  EXPECT_EQ(conv.shape.to_string(), "(bf16[1,5120,34,31,53], u8[7150336])");
  EXPECT_EQ(conv.shape.byte_size(), 579177216u);
  EXPECT_EQ(conv.op_name, "jit(forward_3d_conv)/conv_general_dilated");
  EXPECT_EQ(m->source_line(conv), "/workspace/traces/generate_conv_trace.py:23");
  EXPECT_EQ(conv.operand_ids, (std::vector<int64_t>{12884901890, 12884901891}));
  auto stack = m->stack(conv);
  ASSERT_EQ(stack.size(), 3u);
  EXPECT_EQ(stack.front()->function, "forward_3d_conv");
  EXPECT_EQ(stack.front()->line, 23);
  EXPECT_EQ(stack.front()->column, 11);
  EXPECT_EQ(stack.back()->function, "<module>");
  EXPECT_EQ(stack.back()->line, 103);

  const HloInstruction& fusion = must_find(*m, "input_transpose_fusion.1");
  EXPECT_EQ(fusion.called_computation_ids, std::vector<int64_t>{6});
  EXPECT_EQ(computation_name(*m, 6), "fused_transpose.2");
  EXPECT_EQ(fusion.shape.to_string(), "bf16[16,199680]");
}

TEST(HloIndexFixtures, TpuFingerprintsAndIotaReplicaGroups) {
  LOAD_OR_SKIP(l, "tpu_4chip_inference.xplane.pb");
  Totals t = totals(l->index);
  EXPECT_EQ(t.modules, 4u);
  EXPECT_EQ(t.computations, 8u);
  EXPECT_EQ(t.instructions, 43u);
  EXPECT_EQ(t.with_op_name, 18u);
  EXPECT_EQ(t.with_frame, 10u);
  EXPECT_EQ(t.frames, 23u);
  EXPECT_EQ(t.shape_bytes, 214748364868u);

  // TPU program ids are uint64 fingerprints; the device events' uint64 `program_id` stat matches
  // the metadata id's bit pattern. The module's own id is a different, small number.
  const HloModule* psum = l->index.find(static_cast<int64_t>(9646411105960254074ull), "");
  ASSERT_NE(psum, nullptr);
  EXPECT_EQ(psum->name, "jit__psum");
  EXPECT_EQ(psum->program_id, -8800332967749297542);
  EXPECT_EQ(psum->module_id, 8);
  const HloModule* f = l->index.find(static_cast<int64_t>(12190760917235803885ull), "");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->name, "jit_f");
  EXPECT_EQ(f->module_id, 12);
  const HloModule* convert = l->index.find(2433868464432466958, "");
  ASSERT_NE(convert, nullptr);
  EXPECT_EQ(convert->module_id, 1);

  const HloInstruction& ar = must_find(*psum, "all-reduce");
  EXPECT_EQ(ar.opcode, "all-reduce");
  // collective_device_list { iota_replica_group_list { 4 groups of 2, [2,4] transposed (1,0) } }
  EXPECT_EQ(ar.replica_groups, (std::vector<std::vector<int64_t>>{{0, 4}, {1, 5}, {2, 6}, {3, 7}}));
  EXPECT_EQ(ar.called_computation_ids, std::vector<int64_t>{13});
  EXPECT_EQ(computation_name(*psum, 13), "region_0.3.clone");
  EXPECT_EQ(ar.shape.to_string(), "f32[5,1024,1024,256]");
  EXPECT_EQ(ar.shape.byte_size(), 5368709120u);
  EXPECT_EQ(ar.op_name, "jit(_psum)/jit(main)/reduce_sum");
  EXPECT_EQ(psum->source_line(ar),
            "experimental/users/davelacey/host_offload_stress_test/host_offload_stress_test.py:38");
  auto stack = psum->stack(ar);
  ASSERT_EQ(stack.size(), 6u);
  EXPECT_EQ(stack.front()->function, "main");
  EXPECT_EQ(stack.front()->line, 38);
  EXPECT_EQ(stack.front()->column, 7);
  EXPECT_EQ(stack.back()->file, "<embedded module '_launcher'>");
  EXPECT_EQ(stack.back()->function, "run_filename_as_main");
  EXPECT_EQ(stack.back()->line, 153);

  const HloInstruction& copy = must_find(*f, "copy-start");
  EXPECT_EQ(copy.shape.to_string(), "(f32[5,1024,1024,256], f32[5,1024,1024,256], u32[])");
  EXPECT_EQ(copy.shape.byte_size(), 10737418244u);
  const HloInstruction& add = must_find(*f, "add.3");
  auto add_stack = f->stack(add);
  ASSERT_EQ(add_stack.size(), 9u);
  EXPECT_EQ(add_stack.front()->function, "main.<locals>.f.<locals>.process");
  EXPECT_EQ(add_stack.front()->line, 29);
  EXPECT_EQ(add_stack[4]->file, "third_party/py/absl/app.py");
  EXPECT_EQ(add_stack[4]->function, "_run_main");
  EXPECT_EQ(add_stack.back()->function, "run_filename_as_main");
}

TEST(HloIndexFixtures, SameProgramAddedTwiceIsKeptOnce) {
  LOAD_OR_SKIP(l, "mi300x_jax_gemm.xplane.pb");
  HloIndex index;
  const HloModule& first = index.add(l->blobs[0].bytes, l->blobs[0].map_key);
  const HloModule& again = index.add(l->blobs[0].bytes, l->blobs[0].map_key);
  EXPECT_EQ(&first, &again);
  EXPECT_EQ(index.modules().size(), 1u);
  index.add(l->blobs[0].bytes, HloIndex::kUnknownProgramId);
  EXPECT_EQ(index.modules().size(), 2u);
  EXPECT_EQ(index.find(HloIndex::kUnknownProgramId, first.name), nullptr);  // now ambiguous
}

// ---------------------------------------------------------------------------------------------
// Hand-encoded protos

struct Msg {
  std::string b;

  void key(uint32_t field, WireType t) { raw_varint((uint64_t{field} << 3) | uint64_t(t)); }
  void raw_varint(uint64_t v) {
    while (v >= 0x80) {
      b.push_back(static_cast<char>(v | 0x80));
      v >>= 7;
    }
    b.push_back(static_cast<char>(v));
  }
  Msg& varint(uint32_t field, int64_t v) {
    key(field, WireType::kVarint);
    raw_varint(static_cast<uint64_t>(v));
    return *this;
  }
  Msg& bytes(uint32_t field, std::string_view s) {
    key(field, WireType::kLen);
    raw_varint(s.size());
    b.append(s);
    return *this;
  }
  Msg& msg(uint32_t field, const Msg& m) { return bytes(field, m.b); }
  Msg& packed(uint32_t field, std::initializer_list<int64_t> vs) {
    Msg inner;
    for (int64_t v : vs) inner.raw_varint(static_cast<uint64_t>(v));
    return bytes(field, inner.b);
  }
  Msg& unpacked(uint32_t field, std::initializer_list<int64_t> vs) {
    for (int64_t v : vs) varint(field, v);
    return *this;
  }
  Msg& fixed32(uint32_t field, uint32_t v) {
    key(field, WireType::kFixed32);
    b.append(reinterpret_cast<const char*>(&v), 4);
    return *this;
  }
  Msg& fixed64(uint32_t field, uint64_t v) {
    key(field, WireType::kFixed64);
    b.append(reinterpret_cast<const char*>(&v), 8);
    return *this;
  }
};

Msg shape(int32_t type, std::initializer_list<int64_t> dims, bool packed = true) {
  Msg s;
  s.varint(2, type);
  if (dims.size()) packed ? s.packed(3, dims) : s.unpacked(3, dims);
  return s;
}

Msg module_with(const Msg& instruction, const Msg& extra_module_fields = Msg{}) {
  Msg comp;
  comp.bytes(1, "entry").msg(2, instruction).varint(5, 7);
  Msg module;
  module.bytes(1, "m").msg(3, comp).varint(5, 99).varint(6, 7);
  module.b += extra_module_fields.b;
  return module;
}

Msg hlo_proto(const Msg& module) { return Msg{}.msg(1, module); }

const HloInstruction& only_instruction(const HloModule& m) {
  if (m.instructions.size() != 1) throw std::runtime_error("expected one instruction");
  return m.instructions[0];
}

TEST(HloIndexWire, PackedAndUnpackedRepeatedIntsAgree) {
  for (bool packed : {true, false}) {
    Msg instr;
    instr.bytes(1, "x").bytes(2, "add").msg(3, shape(11, {3, 1ll << 40}, packed)).varint(35, -5);
    packed ? instr.packed(36, {-1, 1ll << 62, 3}) : instr.unpacked(36, {-1, 1ll << 62, 3});
    packed ? instr.packed(38, {4, 5}) : instr.unpacked(38, {4, 5});
    std::string bytes = hlo_proto(module_with(instr)).b;
    HloIndex index;
    const HloModule& m = index.add(bytes, 1);
    const HloInstruction& i = only_instruction(m);
    SCOPED_TRACE(packed ? "packed" : "unpacked");
    EXPECT_EQ(i.id, -5);
    EXPECT_EQ(i.shape.dimensions, (std::vector<int64_t>{3, 1ll << 40}));
    EXPECT_EQ(i.operand_ids, (std::vector<int64_t>{-1, 1ll << 62, 3}));
    EXPECT_EQ(i.called_computation_ids, (std::vector<int64_t>{4, 5}));
    EXPECT_EQ(m.module_id, 99);
    EXPECT_EQ(m.entry_computation_id, 7);
    EXPECT_EQ(m.computations.at(0).name, "entry");
  }
}

TEST(HloIndexWire, UnknownFieldsOfEveryWireTypeAreSkipped) {
  Msg md;
  md.bytes(1, "MatMul")
      .fixed64(9, 1)
      .bytes(2, "jit(f)/dot")
      .bytes(3, "f.py")
      .varint(4, 12)
      .varint(15, 0)
      .bytes(16, "sched");
  Msg instr;
  instr.fixed32(500, 7)
      .bytes(1, "dot.1")
      .varint(9, 3)
      .bytes(2, "dot")
      .fixed64(80, 42)
      .msg(3, shape(16, {2, 2}))
      .msg(7, md)
      .bytes(43, "{\"backend\":1}")
      .varint(35, 1);
  Msg extra;
  extra.bytes(2, "entry").fixed32(1000, 1).bytes(19, "frontend attrs");
  Msg proto = hlo_proto(module_with(instr, extra));
  proto.bytes(3, "buffer assignment").varint(4, 1);
  HloIndex index;
  const HloModule& m = index.add(proto.b, 3);
  const HloInstruction& i = only_instruction(m);
  EXPECT_EQ(i.name, "dot.1");
  EXPECT_EQ(i.opcode, "dot");
  EXPECT_EQ(i.op_type, "MatMul");
  EXPECT_EQ(i.op_name, "jit(f)/dot");
  EXPECT_EQ(m.source_line(i), "f.py:12");
  EXPECT_EQ(i.shape.to_string(), "bf16[2,2]");
}

TEST(HloIndexWire, BareModule) {
  Msg instr;
  instr.bytes(1, "p").bytes(2, "parameter").msg(3, shape(4, {}));
  std::string bytes = module_with(instr).b;
  HloIndex index;
  const HloModule& m = index.add(bytes, HloIndex::kUnknownProgramId, /*bare_module=*/true);
  EXPECT_EQ(m.name, "m");
  EXPECT_EQ(m.program_id, HloIndex::kUnknownProgramId);
  EXPECT_EQ(only_instruction(m).shape.to_string(), "s32[]");
  EXPECT_EQ(index.find(HloIndex::kUnknownProgramId, "m"), &m);
  // The same bytes read as an HloProto are a module-less proto.
  EXPECT_THROW(index.add(bytes, 5), InputError);
}

TEST(HloIndexWire, ReplicaGroupForms) {
  auto groups_of = [](const Msg& instr) {
    static std::vector<std::unique_ptr<std::string>> keep;  // the index views these bytes
    keep.push_back(std::make_unique<std::string>(hlo_proto(module_with(instr)).b));
    static HloIndex index;
    return only_instruction(index.add(*keep.back(), HloIndex::kUnknownProgramId)).replica_groups;
  };
  using Groups = std::vector<std::vector<int64_t>>;
  auto iota = [](int64_t n, int64_t size, std::initializer_list<int64_t> dims,
                 std::initializer_list<int64_t> perm) {
    Msg list;
    list.varint(1, n).varint(2, size);
    if (dims.size()) list.packed(3, dims);
    if (perm.size()) list.packed(4, perm);
    Msg cdl;
    cdl.msg(2, list);
    Msg instr;
    instr.bytes(1, "ar").bytes(2, "all-reduce").msg(87, cdl);
    return instr;
  };

  // Deprecated replica_groups=49, packed and unpacked.
  Msg legacy;
  legacy.bytes(1, "ar").msg(49, Msg{}.packed(1, {0, 1})).msg(49, Msg{}.unpacked(1, {2, 3}));
  EXPECT_EQ(groups_of(legacy), (Groups{{0, 1}, {2, 3}}));

  // Explicit groups inside collective_device_list.
  Msg cdl;
  cdl.msg(1, Msg{}.packed(1, {3, 2, 1, 0}));
  Msg explicit_list;
  explicit_list.bytes(1, "ar").msg(87, cdl);
  EXPECT_EQ(groups_of(explicit_list), (Groups{{3, 2, 1, 0}}));

  // XLA's documented examples: [2,4]<=[8] and [2,4]<=[4,2]T(1,0).
  EXPECT_EQ(groups_of(iota(2, 4, {}, {})), (Groups{{0, 1, 2, 3}, {4, 5, 6, 7}}));
  EXPECT_EQ(groups_of(iota(2, 4, {8}, {})), (Groups{{0, 1, 2, 3}, {4, 5, 6, 7}}));
  EXPECT_EQ(groups_of(iota(2, 4, {4, 2}, {1, 0})), (Groups{{0, 2, 4, 6}, {1, 3, 5, 7}}));
  // Rank 3: [2,2,2] transposed (2,0,1): element (i,j,k) = 4j + 2k + i.
  EXPECT_EQ(groups_of(iota(4, 2, {2, 2, 2}, {2, 0, 1})), (Groups{{0, 2}, {4, 6}, {1, 3}, {5, 7}}));
  // Iota and legacy in one instruction: the device list wins.
  Msg both = iota(1, 2, {}, {});
  both.msg(49, Msg{}.packed(1, {0, 1}));
  EXPECT_EQ(groups_of(both), (Groups{{0, 1}}));

  // Inconsistent iota lists are left unexpanded rather than guessed at.
  EXPECT_TRUE(groups_of(iota(2, 4, {3, 3}, {})).empty());      // 9 != 8
  EXPECT_TRUE(groups_of(iota(2, 4, {4, 2}, {0, 0})).empty());  // not a permutation
  EXPECT_TRUE(groups_of(iota(2, 4, {4, 2}, {1})).empty());     // wrong rank
  EXPECT_TRUE(groups_of(iota(-1, 4, {}, {})).empty());
  EXPECT_TRUE(groups_of(iota(1ll << 40, 1ll << 40, {}, {})).empty());  // absurd size
}

TEST(HloIndexShape, ByteSizesAndText) {
  auto s = [](int32_t type, std::vector<int64_t> dims) {
    HloShape out;
    out.element_type = type;
    out.dimensions = std::move(dims);
    return out;
  };
  EXPECT_EQ(s(1, {10}).byte_size(), 10u);  // pred
  EXPECT_EQ(s(1, {10}).to_string(), "pred[10]");
  EXPECT_EQ(s(2, {3}).byte_size(), 3u);   // s8
  EXPECT_EQ(s(19, {3}).byte_size(), 3u);  // f8e5m2
  EXPECT_EQ(s(25, {3}).to_string(), "f8e4m3fnuz[3]");
  EXPECT_EQ(s(7, {3}).byte_size(), 6u);  // u16
  EXPECT_EQ(s(10, {3}).to_string(), "f16[3]");
  EXPECT_EQ(s(8, {3}).byte_size(), 12u);      // u32
  EXPECT_EQ(s(12, {2, 2}).byte_size(), 32u);  // f64
  EXPECT_EQ(s(15, {2}).byte_size(), 16u);     // c64
  EXPECT_EQ(s(18, {2}).byte_size(), 32u);     // c128
  EXPECT_EQ(s(18, {2}).to_string(), "c128[2]");
  EXPECT_EQ(s(21, {3}).byte_size(), 2u);     // s4: packed, rounded up per array
  EXPECT_EQ(s(22, {4, 2}).byte_size(), 4u);  // u4
  EXPECT_EQ(s(21, {3}).to_string(), "s4[3]");
  EXPECT_EQ(s(11, {}).byte_size(), 4u);  // scalar
  EXPECT_EQ(s(11, {}).to_string(), "f32[]");
  EXPECT_EQ(s(11, {0, 5}).byte_size(), 0u);
  EXPECT_EQ(s(17, {}).byte_size(), 0u);  // token
  EXPECT_EQ(s(17, {}).to_string(), "token[]");
  EXPECT_EQ(s(14, {}).byte_size(), 0u);  // opaque
  EXPECT_EQ(s(14, {}).to_string(), "opaque[]");
  EXPECT_EQ(s(11, {1ll << 40, 1ll << 40}).byte_size(), UINT64_MAX);  // saturates

  HloShape tuple;
  tuple.element_type = 13;
  tuple.tuple_shapes = {s(11, {2}), s(4, {})};
  EXPECT_EQ(tuple.to_string(), "(f32[2], s32[])");
  EXPECT_EQ(tuple.byte_size(), 12u);
  HloShape nested;
  nested.element_type = 13;
  nested.tuple_shapes = {tuple, s(17, {}), HloShape{13, {}, {}}};
  EXPECT_EQ(nested.to_string(), "((f32[2], s32[]), token[], ())");
  EXPECT_EQ(nested.byte_size(), 12u);
}

TEST(HloIndexWire, StackFramesAndSourceFallback) {
  // Frames: 1 = outer (a.py:1 main), 2 = inner (b.py:20 g) -> parent 1, 3 = dangling location.
  Msg sfi;
  sfi.bytes(1, "a.py").bytes(1, "b.py").bytes(2, "main").bytes(2, "g");
  sfi.msg(3, Msg{}.varint(1, 1).varint(2, 1).varint(3, 1).varint(4, 2));
  sfi.msg(3, Msg{}.varint(1, 2).varint(2, 2).varint(3, 20).varint(4, 5));
  sfi.msg(4, Msg{}.varint(1, 1));
  sfi.msg(4, Msg{}.varint(1, 2).varint(2, 1));
  sfi.msg(4, Msg{}.varint(1, 9).varint(2, 3));  // bad location; parent is itself
  Msg md;
  md.bytes(2, "jit(f)/sin").varint(15, 2);  // no source_file: the frame supplies it
  Msg instr;
  instr.bytes(1, "sin").bytes(2, "sine").msg(7, md);
  Msg extra;
  extra.msg(17, sfi);
  std::string bytes = hlo_proto(module_with(instr, extra)).b;
  HloIndex index;
  const HloModule& m = index.add(bytes, 1);
  const HloInstruction& i = only_instruction(m);
  EXPECT_EQ(m.source_line(i), "b.py:20");
  auto st = m.stack(i);
  ASSERT_EQ(st.size(), 2u);
  EXPECT_EQ(st[0]->function, "g");
  EXPECT_EQ(st[0]->column, 5);
  EXPECT_EQ(st[1]->file, "a.py");
  EXPECT_EQ(st[1]->function, "main");
  ASSERT_EQ(m.stack_frames.size(), 3u);
  EXPECT_EQ(m.stack_frames[2].file, "");  // dangling reference resolves to nothing
  HloInstruction looping = i;
  looping.stack_frame_id = 3;  // a frame that is its own parent must not loop forever
  EXPECT_LE(m.stack(looping).size(), 3u);
  looping.stack_frame_id = 42;
  EXPECT_TRUE(m.stack(looping).empty());
  EXPECT_EQ(m.source_line(looping), "");
}

// ---------------------------------------------------------------------------------------------
// Corrupt input: always InputError, never a crash (run under the sanitizer build too).

TEST(HloIndexBadInput, WrongWireTypeForKnownField) {
  Msg instr;
  instr.varint(1, 5);  // name as a varint
  HloIndex index;
  std::string bytes = hlo_proto(module_with(instr)).b;
  EXPECT_THROW(index.add(bytes, 1), InputError);
  Msg shape_as_int;
  shape_as_int.bytes(1, "x").varint(3, 11);
  bytes = hlo_proto(module_with(shape_as_int)).b;
  EXPECT_THROW(index.add(bytes, 2), InputError);
  EXPECT_TRUE(index.empty());
}

TEST(HloIndexBadInput, EmptyOrModuleless) {
  HloIndex index;
  EXPECT_THROW(index.add("", 1), InputError);
  EXPECT_THROW(index.add("", 1, true), InputError);
  std::string only_name = Msg{}.msg(1, Msg{}.bytes(1, "m")).b;
  EXPECT_THROW(index.add(only_name, 1), InputError);
}

TEST(HloIndexBadInput, DeeplyNestedShape) {
  Msg s = shape(11, {1});
  for (int i = 0; i < 200; ++i) s = Msg{}.varint(2, 13).msg(4, s);
  Msg instr;
  instr.bytes(1, "t").msg(3, s);
  std::string bytes = hlo_proto(module_with(instr)).b;
  HloIndex index;
  EXPECT_THROW(index.add(bytes, 1), InputError);
}

TEST(HloIndexBadInput, TruncatedRealProtos) {
  LOAD_OR_SKIP(l, "mi300x_jax_gemm.xplane.pb");
  for (const HloBlob& b : l->blobs) {
    // A prefix that ends exactly where a top-level field starts is itself a valid proto; once the
    // hlo_module field is complete (buffer_assignment follows it) such a prefix must decode.
    std::set<size_t> field_starts;
    size_t module_end = b.bytes.size();
    Reader r(b.bytes, reinterpret_cast<const uint8_t*>(b.bytes.data()));
    Field f;
    while (r.next(f)) {
      field_starts.insert(static_cast<size_t>(r.field_offset()));
      if (f.number == 1) module_end = static_cast<size_t>(r.offset_of(f.bytes)) + f.bytes.size();
    }
    // Every prefix of the smallest protos, a spread of prefixes of the rest.
    size_t step = b.bytes.size() < 1000 ? 1 : b.bytes.size() / 97;
    for (size_t n = 0; n < b.bytes.size(); n += step) {
      HloIndex index;
      std::string_view prefix = b.bytes.substr(0, n);
      if (n >= module_end && field_starts.count(n)) {
        EXPECT_NO_THROW(index.add(prefix, 1)) << "prefix " << n;
      } else {
        EXPECT_THROW(index.add(prefix, 1), InputError) << "prefix " << n;
      }
    }
  }
}

TEST(HloIndexBadInput, RandomBytes) {
  std::mt19937_64 rng(20240601);
  for (int trial = 0; trial < 400; ++trial) {
    std::string bytes(1 + rng() % 2048, '\0');
    for (char& c : bytes) c = static_cast<char>(rng());
    HloIndex index;
    EXPECT_THROW(index.add(bytes, trial), InputError) << "trial " << trial;
    EXPECT_THROW(index.add(bytes, trial, true), InputError) << "trial " << trial;
  }
}

TEST(HloIndexBadInput, FlippedBytesNeverCrash) {
  LOAD_OR_SKIP(l, "mi300x_jax_elementwise.xplane.pb");
  std::mt19937_64 rng(7);
  size_t threw = 0, decoded = 0;
  for (const HloBlob& b : l->blobs) {
    for (int trial = 0; trial < 40; ++trial) {
      std::string bytes(b.bytes);
      for (int k = 0; k < 3; ++k) bytes[rng() % bytes.size()] = static_cast<char>(rng());
      HloIndex index;
      try {
        const HloModule& m = index.add(bytes, 1);
        // Whatever decoded must be usable.
        for (const HloInstruction& i : m.instructions) {
          (void)i.shape.byte_size();
          (void)i.shape.to_string();
          (void)m.stack(i);
          (void)m.source_line(i);
        }
        ++decoded;
      } catch (const InputError&) {
        ++threw;
      }
    }
  }
  EXPECT_EQ(threw + decoded, 16u * 40u);
  EXPECT_GT(threw, 0u);
}

}  // namespace
}  // namespace jaxprof
