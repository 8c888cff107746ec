#include "jaxprof/analysis/cost/hlo_cost.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <string_view>
#include <unordered_map>

#include "jaxprof/analysis/cost/custom_call_cost.h"

namespace jaxprof {
namespace {

// A corrupt proto can make computations call each other in a cycle.
constexpr int kMaxCallDepth = 32;

bool one_of(std::string_view op, std::initializer_list<std::string_view> set) {
  return std::find(set.begin(), set.end(), op) != set.end();
}

bool is_transcendental(std::string_view op) {
  return one_of(op,
                {"exponential", "exponential-minus-one", "log", "log-plus-one", "logistic", "power",
                 "sqrt", "cbrt", "rsqrt", "tanh", "sine", "cosine", "tan", "atan2", "erf"});
}

bool is_elementwise_flop(std::string_view op) {
  return one_of(op, {"add",
                     "subtract",
                     "multiply",
                     "divide",
                     "remainder",
                     "maximum",
                     "minimum",
                     "negate",
                     "abs",
                     "sign",
                     "floor",
                     "ceil",
                     "round-nearest-afz",
                     "round-nearest-even",
                     "compare",
                     "select",
                     "clamp",
                     "and",
                     "or",
                     "xor",
                     "not",
                     "shift-left",
                     "shift-right-arithmetic",
                     "shift-right-logical",
                     "convert",
                     "is-finite",
                     "popcnt",
                     "count-leading-zeros",
                     "real",
                     "imag",
                     "complex",
                     "reduce-precision",
                     "stochastic-convert"});
}

// Instructions that compute nothing: they move, reinterpret or name data (or order it).
bool is_data_movement(std::string_view op) {
  return one_of(op, {"parameter",
                     "constant",
                     "get-tuple-element",
                     "tuple",
                     "bitcast",
                     "bitcast-convert",
                     "broadcast",
                     "reshape",
                     "dynamic-reshape",
                     "transpose",
                     "copy",
                     "copy-start",
                     "copy-done",
                     "slice",
                     "dynamic-slice",
                     "dynamic-update-slice",
                     "concatenate",
                     "pad",
                     "reverse",
                     "gather",
                     "iota",
                     "after-all",
                     "add-dependency",
                     "domain",
                     "partition-id",
                     "replica-id",
                     "opt-barrier",
                     "optimization-barrier",
                     "send",
                     "send-done",
                     "recv",
                     "recv-done",
                     "all-gather",
                     "all-gather-start",
                     "all-gather-done",
                     "all-to-all",
                     "ragged-all-to-all",
                     "collective-permute",
                     "collective-permute-start",
                     "collective-permute-done",
                     "collective-broadcast",
                     "reduce-scatter",
                     "all-reduce-done",
                     "async-update",
                     "async-done",
                     "infeed",
                     "outfeed",
                     "rng-get-and-update-state",
                     "get-dimension-size",
                     "set-dimension-size"});
}

uint64_t dimension(const HloShape& s, int64_t d, bool& ok) {
  if (d < 0 || static_cast<size_t>(d) >= s.dimensions.size() || s.dimensions[d] < 0) {
    ok = false;
    return 0;
  }
  return static_cast<uint64_t>(s.dimensions[d]);
}

const HloShape& first_array(const HloShape& s) {
  return s.is_tuple() && !s.tuple_shapes.empty() ? first_array(s.tuple_shapes[0]) : s;
}

// How many (output position, kernel position) pairs of one spatial dimension read a real input
// element: not padding, and not a hole that base dilation puts between input elements.
uint64_t valid_pairs(int64_t input, int64_t kernel, int64_t output, const HloWindowDimension& w) {
  if (input <= 0 || kernel <= 0 || output <= 0) return 0;
  const int64_t dilated_input = (input - 1) * w.base_dilation + 1;
  uint64_t count = 0;
  for (int64_t k = 0; k < kernel; ++k) {
    // Output o reads position o * stride + offset of the base-dilated input.
    const int64_t offset = k * w.window_dilation - w.padding_low;
    if (w.base_dilation == 1) {
      // The o with 0 <= o * stride + offset < dilated_input form one range.
      const int64_t lo = offset >= 0 ? 0 : (-offset + w.stride - 1) / w.stride;
      const int64_t last = dilated_input - 1 - offset;
      if (last < 0) continue;
      const int64_t hi = std::min(output - 1, last / w.stride);
      if (hi >= lo) count += static_cast<uint64_t>(hi - lo + 1);
      continue;
    }
    for (int64_t o = 0; o < output; ++o) {
      const int64_t at = o * w.stride + offset;
      if (at >= 0 && at < dilated_input && at % w.base_dilation == 0) ++count;
    }
  }
  return count;
}

// One computation's work, summed over its instructions (and what they call).
struct Work {
  uint64_t flops = 0;
  uint64_t transcendentals = 0;
  bool known = true;
  std::string why;      // when !known
  bool matrix = false;  // holds a dot, convolution or matrix custom call
  bool convolution = false;
  ComputeType compute = ComputeType::kVector;
  std::string_view heaviest;  // the opcode that names the work ("dot", "reduce", ...)

  void add(const Work& o) {
    flops = cost_add(flops, o.flops);
    transcendentals = cost_add(transcendentals, o.transcendentals);
    if (!o.known && known) {
      known = false;
      why = o.why;
    }
    if (o.matrix && !matrix) compute = o.compute;
    matrix |= o.matrix;
    convolution |= o.convolution;
    if (rank(o.heaviest) > rank(heaviest)) heaviest = o.heaviest;
  }
  void unknown(std::string reason) {
    if (known) why = std::move(reason);
    known = false;
  }
  static int rank(std::string_view op) {
    if (op == "convolution") return 5;
    if (op == "dot" || op == "custom-call") return 4;
    if (op == "reduce" || op == "reduce-window" || op == "sort" || op == "scatter") return 3;
    if (op == "elementwise") return 2;
    if (!op.empty()) return 1;
    return 0;
  }
};

class Counter {
 public:
  explicit Counter(const HloModule& m) : m_(m) {}

  Work instruction(const HloInstruction& in, int depth) {
    Work w;
    const std::string_view op = in.opcode;
    if (depth > kMaxCallDepth) {
      w.unknown("computations call each other too deeply");
      return w;
    }
    if (is_elementwise_flop(op)) {
      w.flops = in.shape.element_count();
      w.heaviest = "elementwise";
    } else if (is_transcendental(op)) {
      w.transcendentals = in.shape.element_count();
      w.heaviest = "elementwise";
    } else if (op == "dot") {
      const HloInstruction* lhs = m_.operand(in, 0);
      const HloDotDimensions* dims = m_.dot_dimensions(in);
      uint64_t flops = 0;
      if (!lhs || !dims || !dot_flops(lhs->shape, in.shape, *dims, flops)) {
        w.unknown("dot without operand shapes or dimension numbers");
      } else {
        w.flops = flops;
      }
      w.matrix = true;
      if (lhs) w.compute = matrix_compute_type(lhs->shape.element_type, in.operand_precision);
      w.heaviest = "dot";
    } else if (op == "convolution") {
      const HloInstruction* lhs = m_.operand(in, 0);
      const HloInstruction* rhs = m_.operand(in, 1);
      const HloConvolutionDimensions* dims = m_.convolution_dimensions(in);
      uint64_t flops = 0;
      if (!lhs || !rhs || !dims ||
          !convolution_flops(lhs->shape, rhs->shape, in.shape, *dims, m_.window(in),
                             in.feature_group_count, in.batch_group_count, flops)) {
        w.unknown("convolution without operand shapes or dimension numbers");
      } else {
        w.flops = flops;
      }
      w.matrix = w.convolution = true;
      if (lhs) w.compute = matrix_compute_type(lhs->shape.element_type, in.operand_precision);
      w.heaviest = "convolution";
    } else if (op == "reduce" || op == "reduce-window" || op == "map" || op == "scatter" ||
               op == "select-and-scatter" || op == "all-reduce" || op == "all-reduce-start") {
      applied(in, depth, w);
    } else if (op == "fusion" || op == "call" || op == "async-start") {
      for (size_t i = 0; i < in.called_computation_ids.size(); ++i) {
        const HloComputation* c = m_.called(in, i);
        if (!c) {
          w.unknown("called computation missing from the HLO");
          continue;
        }
        w.add(computation(*c, depth + 1));
      }
    } else if (op == "while") {
      loop(in, depth, w);
    } else if (op == "custom-call") {
      OpCost c = custom_call_cost(m_, in);
      if (!c.known()) {
        w.unknown(c.detail);
      } else {
        w.flops = c.flops;
        w.transcendentals = c.transcendentals;
      }
      w.matrix = c.compute != ComputeType::kVector;
      w.compute = c.compute;
      w.heaviest = "custom-call";
    } else if (op == "sort") {
      // A comparison sort: n log2(n) comparisons of the first operand's elements.
      const HloInstruction* keys = m_.operand(in, 0);
      uint64_t n = keys ? keys->shape.element_count() : 0;
      uint64_t log2n = 0;
      while ((uint64_t{1} << log2n) < n && log2n < 63) ++log2n;
      w.flops = cost_mul(n, log2n);
      w.heaviest = "sort";
    } else if (op == "rng" || op == "rng-bit-generator") {
      // As XLA: each random number costs one transcendental.
      uint64_t n = 0;
      if (in.shape.is_tuple()) {
        for (const HloShape& s : in.shape.tuple_shapes) n = cost_add(n, s.element_count());
      } else {
        n = in.shape.element_count();
      }
      w.transcendentals = n;
      w.heaviest = "elementwise";
    } else if (is_data_movement(op)) {
      w.heaviest = "data";
    } else {
      // conditional, fft, cholesky, triangular-solve, top-k, batch-norm-*, and opcodes newer than
      // this model: their work depends on what the HLO does not say, or is not modelled.
      w.unknown(std::string("no cost model for '") + std::string(op) + "'");
    }
    return w;
  }

  Work computation(const HloComputation& c, int depth) {
    const auto index = static_cast<size_t>(&c - m_.computations.data());
    if (auto it = memo_.find(index); it != memo_.end()) return it->second;
    Work w;
    if (depth > kMaxCallDepth) {
      w.unknown("computations call each other too deeply");
      return w;
    }
    for (uint32_t i : c.instructions) w.add(instruction(m_.instructions[i], depth));
    memo_.emplace(index, w);
    return w;
  }

 private:
  // Ops that apply a computation per element (reduce, map, scatter, ...): how many times, times
  // the computation's own cost.
  void applied(const HloInstruction& in, int depth, Work& w) {
    const std::string_view op = in.opcode;
    w.heaviest = op == "map" ? "elementwise" : op;
    if (op == "all-reduce" || op == "all-reduce-start") {
      // As XLA: one reduction per output element (it does not know the group size either).
      uint64_t n = 0;
      if (in.shape.is_tuple()) {
        for (const HloShape& s : in.shape.tuple_shapes) n = cost_add(n, s.element_count());
      } else {
        n = in.shape.element_count();
      }
      w.flops = n;
      w.heaviest = "data";
      return;
    }
    const HloComputation* applied = m_.called(in, 0);
    if (!applied) {
      w.unknown("the applied computation is missing from the HLO");
      return;
    }
    Work per = computation(*applied, depth + 1);
    uint64_t times = 0;
    if (op == "reduce") {
      const HloInstruction* input = m_.operand(in, 0);
      uint64_t in_n = input ? input->shape.element_count() : 0;
      uint64_t out_n = first_array(in.shape).element_count();
      times = in_n > out_n ? in_n - out_n : 0;
    } else if (op == "reduce-window") {
      const std::vector<HloWindowDimension>* window = m_.window(in);
      uint64_t window_n = 1;
      if (window)
        for (const HloWindowDimension& d : *window)
          window_n = cost_mul(window_n, static_cast<uint64_t>(std::max<int64_t>(d.size, 0)));
      times = cost_mul(window_n > 0 ? window_n - 1 : 0, first_array(in.shape).element_count());
    } else if (op == "map") {
      times = in.shape.element_count();
    } else if (op == "scatter") {
      // Operands: the scattered-into arrays, the indices, then as many update arrays.
      const size_t n = in.operand_ids.size();
      const HloInstruction* updates = n >= 3 ? m_.operand(in, (n - 1) / 2 + 1) : nullptr;
      times = updates ? updates->shape.element_count() : 0;
    } else if (op == "select-and-scatter") {
      // Called computations: select, then scatter. Each source element runs the select
      // window - 1 times and the scatter once.
      const HloInstruction* source = m_.operand(in, 1);
      const std::vector<HloWindowDimension>* window = m_.window(in);
      uint64_t window_n = 1;
      if (window)
        for (const HloWindowDimension& d : *window)
          window_n = cost_mul(window_n, static_cast<uint64_t>(std::max<int64_t>(d.size, 0)));
      const uint64_t src = source ? source->shape.element_count() : 0;
      times = cost_mul(src, window_n > 0 ? window_n - 1 : 0);
      if (const HloComputation* scatter = m_.called(in, 1)) {
        Work s = computation(*scatter, depth + 1);
        w.flops = cost_add(w.flops, cost_mul(s.flops, src));
        w.transcendentals = cost_add(w.transcendentals, cost_mul(s.transcendentals, src));
        if (!s.known) w.unknown(s.why);
      }
    }
    w.flops = cost_add(w.flops, cost_mul(per.flops, times));
    w.transcendentals = cost_add(w.transcendentals, cost_mul(per.transcendentals, times));
    if (!per.known) w.unknown(per.why);
  }

  // A while loop costs its trip count times one iteration; XLA's GPU backend records the count
  // it proved in the backend config ("known_trip_count":{"n":"5"}).
  void loop(const HloInstruction& in, int depth, Work& w) {
    uint64_t trips = 0;
    const std::string_view cfg = in.backend_config;
    if (size_t at = cfg.find("\"known_trip_count\""); at != std::string_view::npos) {
      size_t n = cfg.find("\"n\"", at);
      if (n != std::string_view::npos) {
        size_t digit = cfg.find_first_of("0123456789", n + 3);
        if (digit != std::string_view::npos && digit - n < 8)
          std::from_chars(cfg.data() + digit, cfg.data() + cfg.size(), trips);
      }
    }
    if (trips == 0) {
      w.unknown("while loop with no known trip count");
      return;
    }
    for (size_t i = 0; i < in.called_computation_ids.size(); ++i) {
      const HloComputation* c = m_.called(in, i);
      if (!c) {
        w.unknown("loop body missing from the HLO");
        return;
      }
      Work body = computation(*c, depth + 1);
      body.flops = cost_mul(body.flops, trips);
      body.transcendentals = cost_mul(body.transcendentals, trips);
      w.add(body);
    }
  }

  const HloModule& m_;
  std::unordered_map<size_t, Work> memo_;
};

// Bytes a fusion reads through one parameter of its fused computation: the whole array when
// any user reads it as such, else only what its slices take (XLA's rule, so that a fusion that
// slices a large buffer is not charged for all of it).
uint64_t parameter_read_bytes(const HloModule& m, const HloComputation& comp,
                              const HloInstruction& param, int depth) {
  const uint64_t whole = param.shape.byte_size();
  if (depth > kMaxCallDepth) return whole;
  uint64_t sliced = 0;
  bool read_whole = m.root(comp) == &param;
  for (uint32_t idx : comp.instructions) {
    const HloInstruction& user = m.instructions[idx];
    for (size_t k = 0; k < user.operand_ids.size(); ++k) {
      if (user.operand_ids[k] != param.id) continue;
      const std::string_view op = user.opcode;
      if (op == "slice" || (op == "dynamic-slice" && k == 0)) {
        sliced = cost_add(sliced, user.shape.byte_size());
      } else if (op == "dynamic-update-slice" && k == 0) {
        // The updated buffer is aliased to the result: not read.
      } else if (op == "fusion") {
        const HloComputation* inner = m.called(user, 0);
        const HloInstruction* inner_param = nullptr;
        if (inner)
          for (uint32_t j : inner->instructions)
            if (m.instructions[j].opcode == "parameter" &&
                m.instructions[j].parameter_number == static_cast<int32_t>(k))
              inner_param = &m.instructions[j];
        if (inner_param) {
          sliced = cost_add(sliced, parameter_read_bytes(m, *inner, *inner_param, depth + 1));
        } else {
          read_whole = true;
        }
      } else {
        read_whole = true;
      }
    }
  }
  return read_whole ? whole : std::min(whole, sliced);
}

// Bytes a fusion writes: its results, except that a dynamic-update-slice root writes only the
// update (the rest of the buffer is aliased to an operand and stays in place).
uint64_t fusion_write_bytes(const HloModule& m, const HloInstruction& fusion,
                            const HloComputation& comp) {
  const HloInstruction* root = m.root(comp);
  auto written = [&](const HloInstruction* r, const HloShape& shape) -> uint64_t {
    if (r && r->opcode == "dynamic-update-slice")
      if (const HloInstruction* update = m.operand(*r, 1)) return update->shape.byte_size();
    return shape.byte_size();
  };
  if (root && root->opcode == "tuple" && fusion.shape.is_tuple() &&
      root->operand_ids.size() == fusion.shape.tuple_shapes.size()) {
    uint64_t total = 0;
    for (size_t i = 0; i < root->operand_ids.size(); ++i)
      total = cost_add(total, written(m.operand(*root, i), fusion.shape.tuple_shapes[i]));
    return total;
  }
  return written(root, fusion.shape);
}

uint64_t fusion_bytes(const HloModule& m, const HloInstruction& fusion) {
  const HloComputation* comp = m.called(fusion, 0);
  if (!comp) {
    uint64_t total = fusion.shape.byte_size();
    for (size_t i = 0; i < fusion.operand_ids.size(); ++i)
      if (const HloInstruction* o = m.operand(fusion, i))
        total = cost_add(total, o->shape.byte_size());
    return total;
  }
  uint64_t total = fusion_write_bytes(m, fusion, *comp);
  for (uint32_t idx : comp->instructions) {
    const HloInstruction& in = m.instructions[idx];
    if (in.opcode == "parameter") {
      total = cost_add(total, parameter_read_bytes(m, *comp, in, 0));
    } else if (in.opcode == "constant" && in.shape.element_count() > 1) {
      // Scalars are folded into the kernel; arrays are read from memory.
      total = cost_add(total, in.shape.byte_size());
    }
  }
  return total;
}

// Bytes read and written by an instruction that runs as one kernel (or one op on the CPU).
uint64_t boundary_bytes(const HloModule& m, const HloInstruction& in) {
  const std::string_view op = in.opcode;
  auto operand_bytes = [&](size_t i) {
    const HloInstruction* o = m.operand(in, i);
    return o ? o->shape.byte_size() : 0;
  };
  if (op == "fusion") return fusion_bytes(m, in);
  if (one_of(op, {"parameter", "constant", "get-tuple-element", "tuple", "bitcast", "after-all",
                  "add-dependency", "domain", "opt-barrier", "optimization-barrier"}))
    return 0;
  if (op == "slice") return cost_mul(in.shape.byte_size(), 2);
  if (op == "dynamic-slice" || op == "gather") {
    uint64_t total = cost_mul(in.shape.byte_size(), 2);
    for (size_t i = 1; i < in.operand_ids.size(); ++i) total = cost_add(total, operand_bytes(i));
    return total;
  }
  if (op == "dynamic-update-slice") {
    uint64_t total = cost_mul(operand_bytes(1), 2);
    for (size_t i = 2; i < in.operand_ids.size(); ++i) total = cost_add(total, operand_bytes(i));
    return total;
  }
  uint64_t total = in.shape.byte_size();
  for (size_t i = 0; i < in.operand_ids.size(); ++i) total = cost_add(total, operand_bytes(i));
  return total;
}

}  // namespace

bool dot_flops(const HloShape& lhs, const HloShape& result, const HloDotDimensions& dims,
               uint64_t& flops) {
  bool ok = true;
  uint64_t k = 1;
  for (int64_t d : dims.lhs_contracting) k = cost_mul(k, dimension(lhs, d, ok));
  if (!ok || result.is_tuple()) return false;
  flops = cost_mul(cost_mul(2, result.element_count()), k);
  return true;
}

bool convolution_flops(const HloShape& input, const HloShape& kernel, const HloShape& output,
                       const HloConvolutionDimensions& dims,
                       const std::vector<HloWindowDimension>* window, int64_t feature_groups,
                       int64_t batch_groups, uint64_t& flops) {
  bool ok = true;
  const uint64_t in_features = dimension(input, dims.input_feature, ok);
  const uint64_t out_features = dimension(output, dims.output_feature, ok);
  const uint64_t batch = dimension(input, dims.input_batch, ok);
  const size_t spatial = dims.input_spatial.size();
  if (!ok || dims.kernel_spatial.size() != spatial || dims.output_spatial.size() != spatial)
    return false;
  if (window && !window->empty() && window->size() != spatial) return false;
  uint64_t pairs = 1;
  for (size_t i = 0; i < spatial; ++i) {
    const uint64_t in_n = dimension(input, dims.input_spatial[i], ok);
    const uint64_t k_n = dimension(kernel, dims.kernel_spatial[i], ok);
    const uint64_t out_n = dimension(output, dims.output_spatial[i], ok);
    if (!ok) return false;
    HloWindowDimension w;
    if (window && !window->empty()) w = (*window)[i];
    if (w.stride <= 0 || w.window_dilation <= 0 || w.base_dilation <= 0) return false;
    // Bounded work: a corrupt shape must not loop for hours (real windows are far below this).
    if (k_n > (uint64_t{1} << 24) || (w.base_dilation > 1 && cost_mul(k_n, out_n) > (1u << 28)))
      return false;
    pairs = cost_mul(pairs, valid_pairs(static_cast<int64_t>(in_n), static_cast<int64_t>(k_n),
                                        static_cast<int64_t>(out_n), w));
  }
  if (feature_groups <= 0 || batch_groups <= 0) return false;
  const uint64_t fma =
      cost_mul(cost_mul(in_features / static_cast<uint64_t>(feature_groups), out_features),
               cost_mul(batch / static_cast<uint64_t>(batch_groups), pairs));
  flops = cost_mul(fma, 2);
  return true;
}

ComputeType matrix_compute_type(int32_t element_type, uint8_t operand_precision) {
  const char* name = primitive_type_name(element_type);
  const std::string_view t = name ? name : "";
  if (t == "f64" || t == "c128") return ComputeType::kFp64;
  if (t == "f32" || t == "c64")
    return operand_precision >= 2 ? ComputeType::kFp32 : ComputeType::kTf32;
  if (t == "bf16") return ComputeType::kBf16;
  if (t == "f16") return ComputeType::kFp16;
  if (t.starts_with("f8") || t.starts_with("f4")) return ComputeType::kFp8;
  if (t == "s8" || t == "u8" || t == "s4" || t == "u4") return ComputeType::kInt8;
  return ComputeType::kVector;
}

uint64_t result_bytes_without_workspace(const HloShape& shape) {
  if (!shape.is_tuple() || shape.tuple_shapes.size() < 2) return shape.byte_size();
  const HloShape& last = shape.tuple_shapes.back();
  const char* name = primitive_type_name(last.element_type);
  const std::string_view t = name ? name : "";
  const bool scratch = (t == "u8" || t == "s8") && last.dimensions.size() == 1;
  uint64_t total = 0;
  for (size_t i = 0; i + (scratch ? 1 : 0) < shape.tuple_shapes.size(); ++i)
    total = cost_add(total, shape.tuple_shapes[i].byte_size());
  return total;
}

OpCost hlo_instruction_cost(const HloModule& module, const HloInstruction& instr) {
  if (instr.opcode == "custom-call") return custom_call_cost(module, instr);
  OpCost cost;
  Counter counter(module);
  Work w = counter.instruction(instr, 0);
  if (!w.known) {
    cost.detail = w.why;
    return cost;
  }
  cost.source = CostSource::kHlo;
  cost.flops = w.flops;
  cost.transcendentals = w.transcendentals;
  cost.bytes_accessed = boundary_bytes(module, instr);
  cost.compute = w.matrix ? w.compute : ComputeType::kVector;
  std::string what(w.heaviest.empty() ? std::string_view("data") : w.heaviest);
  if (instr.opcode == "fusion") {
    cost.detail = "fusion (" + what + ")";
  } else {
    cost.detail = std::string(instr.opcode);
  }
  return cost;
}

const char* cost_source_name(CostSource s) {
  switch (s) {
    case CostSource::kProfile:
      return "profile";
    case CostSource::kHlo:
      return "hlo";
    case CostSource::kCustomCall:
      return "custom-call";
    case CostSource::kMemcpy:
      return "memcpy";
    case CostSource::kUnknown:
      return "unknown";
  }
  return "unknown";
}

const char* compute_type_name(ComputeType t) {
  switch (t) {
    case ComputeType::kVector:
      return "vector";
    case ComputeType::kFp64:
      return "fp64";
    case ComputeType::kFp32:
      return "fp32";
    case ComputeType::kTf32:
      return "tf32";
    case ComputeType::kBf16:
      return "bf16";
    case ComputeType::kFp16:
      return "fp16";
    case ComputeType::kFp8:
      return "fp8";
    case ComputeType::kInt8:
      return "int8";
  }
  return "vector";
}

}  // namespace jaxprof
