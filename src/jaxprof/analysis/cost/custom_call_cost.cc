#include "jaxprof/analysis/cost/custom_call_cost.h"

#include <simdjson.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <optional>
#include <string>
#include <vector>

#include "jaxprof/analysis/cost/hlo_cost.h"
#include "jaxprof/analysis/ops/name_tokens.h"

namespace jaxprof {
namespace {

using simdjson::dom::element;

bool is_gemm_target(std::string_view t) {
  return t.starts_with("__cublas$gemm") || t.starts_with("__cublas$lt$matmul") ||
         t.starts_with("__hipblaslt$") || t.starts_with("__rocblas$gemm");
}
bool is_conv_target(std::string_view t) {
  return t.starts_with("__cudnn$conv") && t != "__cudnn$convReorderFilter" &&
         t != "__cudnn$convReorderFilterAndBias";
}
bool is_cudnn_attention_target(std::string_view t) { return t.starts_with("__cudnn$fmha"); }
bool is_te_attention_target(std::string_view t) {
  return t.starts_with("te_fused_attn_") || t.starts_with("te_fused_attention_");
}

// The kernel name a Pallas/Triton/Mosaic custom call carries in its config: the string value of
// a "name" key, in JSON ("name": "mha_forward") or an MLIR dictionary (name = "mha_forward").
std::string_view kernel_name(std::string_view cfg) {
  auto ident = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (size_t at = cfg.find("name"); at != std::string_view::npos; at = cfg.find("name", at + 4)) {
    if (at > 0 && ident(cfg[at - 1])) continue;
    size_t p = at + 4;
    if (p < cfg.size() && cfg[p] == '"')
      ++p;
    else if (p < cfg.size() && ident(cfg[p]))
      continue;
    while (p < cfg.size() && cfg[p] == ' ') ++p;
    if (p >= cfg.size() || (cfg[p] != ':' && cfg[p] != '=')) continue;
    ++p;
    while (p < cfg.size() && cfg[p] == ' ') ++p;
    if (p >= cfg.size() || cfg[p] != '"') continue;
    const size_t close = cfg.find('"', p + 1);
    if (close == std::string_view::npos) return {};
    return cfg.substr(p + 1, close - p - 1);
  }
  return {};
}

// A JSON backend config, parsed once (simdjson wants padded input).
struct JsonConfig {
  simdjson::dom::parser parser;
  element root;
  bool ok = false;

  explicit JsonConfig(std::string_view text) {
    size_t first = text.find_first_not_of(" \t\r\n");
    if (first == std::string_view::npos || text[first] != '{') return;
    // An MLIR dictionary also starts with '{' but has no quoted keys: '{name = ...}'.
    size_t next = text.find_first_not_of(" \t\r\n", first + 1);
    if (next == std::string_view::npos || (text[next] != '"' && text[next] != '}')) return;
    simdjson::padded_string padded(text.data(), text.size());
    ok = parser.parse(padded).get(root) == simdjson::SUCCESS;
  }

  std::optional<element> at(std::initializer_list<std::string_view> path) const {
    if (!ok) return std::nullopt;
    element e = root;
    for (std::string_view key : path) {
      simdjson::dom::object o;
      if (e.get(o) != simdjson::SUCCESS) return std::nullopt;
      if (o.at_key(key).get(e) != simdjson::SUCCESS) return std::nullopt;
    }
    return e;
  }
};

// Integers arrive as numbers or (proto3's JSON for int64) strings.
std::optional<int64_t> as_int(const element& e) {
  int64_t i;
  if (e.get(i) == simdjson::SUCCESS) return i;
  uint64_t u;
  if (e.get(u) == simdjson::SUCCESS) return static_cast<int64_t>(u);
  double d;
  if (e.get(d) == simdjson::SUCCESS) return static_cast<int64_t>(d);
  std::string_view s;
  if (e.get(s) == simdjson::SUCCESS) {
    int64_t v = 0;
    auto r = std::from_chars(s.data(), s.data() + s.size(), v);
    if (r.ec == std::errc() && r.ptr == s.data() + s.size()) return v;
  }
  return std::nullopt;
}

std::optional<double> as_double(const element& e) {
  double d;
  if (e.get(d) == simdjson::SUCCESS) return d;
  if (auto i = as_int(e)) return static_cast<double>(*i);
  return std::nullopt;
}

std::string_view as_string(const std::optional<element>& e) {
  std::string_view s;
  if (e && e->get(s) == simdjson::SUCCESS) return s;
  return {};
}

std::vector<int64_t> int_list(const std::optional<element>& e) {
  std::vector<int64_t> out;
  simdjson::dom::array a;
  if (!e || e->get(a) != simdjson::SUCCESS) return out;
  for (element x : a)
    if (auto v = as_int(x)) out.push_back(*v);
  return out;
}

std::optional<HloDotDimensions> dot_dims_from(const std::optional<element>& e) {
  if (!e) return std::nullopt;
  simdjson::dom::object o;
  if (e->get(o) != simdjson::SUCCESS) return std::nullopt;
  HloDotDimensions d;
  auto field = [&](std::string_view k) -> std::optional<element> {
    element v;
    if (o.at_key(k).get(v) != simdjson::SUCCESS) return std::nullopt;
    return v;
  };
  d.lhs_contracting = int_list(field("lhs_contracting_dimensions"));
  d.rhs_contracting = int_list(field("rhs_contracting_dimensions"));
  d.lhs_batch = int_list(field("lhs_batch_dimensions"));
  d.rhs_batch = int_list(field("rhs_batch_dimensions"));
  return d;
}

// An integer (or bool) attribute of an MLIR attribute dictionary: "key = 12 : i64", "key = true".
std::optional<int64_t> mlir_int_attr(std::string_view dict, std::string_view key) {
  size_t at = 0;
  while ((at = dict.find(key, at)) != std::string_view::npos) {
    const bool word_start =
        at == 0 || !(std::isalnum(static_cast<unsigned char>(dict[at - 1])) || dict[at - 1] == '_');
    size_t p = at + key.size();
    at = p;
    if (!word_start) continue;
    while (p < dict.size() && dict[p] == ' ') ++p;
    if (p >= dict.size() || dict[p] != '=') continue;
    ++p;
    while (p < dict.size() && dict[p] == ' ') ++p;
    if (dict.substr(p).starts_with("true")) return 1;
    if (dict.substr(p).starts_with("false")) return 0;
    int64_t v = 0;
    auto r = std::from_chars(dict.data() + p, dict.data() + dict.size(), v);
    if (r.ec == std::errc()) return v;
  }
  return std::nullopt;
}

uint64_t operand_bytes(const HloModule& m, const HloInstruction& in) {
  uint64_t total = 0;
  for (size_t i = 0; i < in.operand_ids.size(); ++i)
    if (const HloInstruction* o = m.operand(in, i)) total = cost_add(total, o->shape.byte_size());
  return total;
}

const HloShape& result_array(const HloShape& s, size_t i = 0) {
  return s.is_tuple() && i < s.tuple_shapes.size() ? s.tuple_shapes[i] : s;
}

uint8_t precision_from(std::string_view text) {
  if (text == "HIGHEST") return 2;
  if (text == "HIGH") return 1;
  return 0;
}

OpCost gemm(const HloModule& m, const HloInstruction& in, OpCost cost) {
  JsonConfig cfg(in.backend_config);
  const HloInstruction* lhs = m.operand(in, 0);
  std::optional<HloDotDimensions> dims =
      dot_dims_from(cfg.at({"gemm_backend_config", "dot_dimension_numbers"}));
  if (!lhs || !dims) {
    cost.detail = "GEMM custom call without operand shapes or dot_dimension_numbers in its config";
    return cost;
  }
  const HloShape& out = result_array(in.shape);
  uint64_t flops = 0;
  if (!dot_flops(lhs->shape, out, *dims, flops)) {
    cost.detail = "GEMM custom call whose dot_dimension_numbers do not fit its operands";
    return cost;
  }
  const uint64_t n = out.element_count();
  std::string detail = "gemm";
  uint64_t transcendentals = 0;
  if (auto beta = cfg.at({"gemm_backend_config", "beta"})) {
    if (auto b = as_double(*beta); b && *b != 0.0) {
      flops = cost_add(flops, cost_mul(n, 2));  // beta x C, added
      detail += " +beta*C";
    }
  }
  const std::string_view epilogue = as_string(cfg.at({"gemm_backend_config", "epilogue"}));
  if (epilogue.find("BIAS") != std::string_view::npos) {
    flops = cost_add(flops, n);
    detail += " +bias";
  }
  if (epilogue.find("RELU") != std::string_view::npos) {
    flops = cost_add(flops, n);
    detail += " +relu";
  }
  if (epilogue.find("GELU") != std::string_view::npos ||
      epilogue.find("SILU") != std::string_view::npos) {
    transcendentals = cost_add(transcendentals, n);
    detail += epilogue.find("GELU") != std::string_view::npos ? " +gelu" : " +silu";
  }
  uint8_t precision = in.operand_precision;
  if (auto ops = cfg.at({"gemm_backend_config", "precision_config", "operand_precision"})) {
    simdjson::dom::array a;
    if (ops->get(a) == simdjson::SUCCESS)
      for (element x : a) {
        std::string_view s;
        if (x.get(s) == simdjson::SUCCESS) precision = std::max(precision, precision_from(s));
      }
  }
  cost.compute = matrix_compute_type(lhs->shape.element_type, precision);
  const std::string_view algorithm =
      as_string(cfg.at({"gemm_backend_config", "precision_config", "algorithm"}));
  if (algorithm.find("F32_F32_F32") != std::string_view::npos) cost.compute = ComputeType::kFp32;
  if (algorithm.find("TF32") != std::string_view::npos) cost.compute = ComputeType::kTf32;
  cost.source = CostSource::kCustomCall;
  cost.flops = flops;
  cost.transcendentals = transcendentals;
  cost.bytes_accessed = cost_add(operand_bytes(m, in), result_bytes_without_workspace(in.shape));
  cost.detail = std::move(detail);
  return cost;
}

OpCost convolution(const HloModule& m, const HloInstruction& in, OpCost cost) {
  const std::string_view t = in.custom_call_target;
  const HloInstruction* op0 = m.operand(in, 0);
  const HloInstruction* op1 = m.operand(in, 1);
  const HloConvolutionDimensions* dims = m.convolution_dimensions(in);
  if (!op0 || !op1 || !dims) {
    cost.detail = "convolution custom call without operand shapes or dimension numbers";
    return cost;
  }
  const HloShape& result = result_array(in.shape);
  // Each kind does the forward convolution's multiply-adds; the window and dimension numbers
  // describe that forward convolution.
  const HloShape *input = &op0->shape, *kernel = &op1->shape, *output = &result;
  std::string detail = "cudnn conv forward";
  if (t.find("BackwardInput") != std::string_view::npos) {
    input = &result;
    output = &op0->shape;
    detail = "cudnn conv backward-input";
  } else if (t.find("BackwardFilter") != std::string_view::npos) {
    kernel = &result;
    output = &op1->shape;
    detail = "cudnn conv backward-filter";
  }
  uint64_t flops = 0;
  if (!convolution_flops(*input, *kernel, *output, *dims, m.window(in), in.feature_group_count,
                         in.batch_group_count, flops)) {
    cost.detail = "convolution custom call whose dimension numbers do not fit its shapes";
    return cost;
  }
  uint64_t transcendentals = 0;
  if (t.find("BiasActivation") != std::string_view::npos) {
    JsonConfig cfg(in.backend_config);
    const uint64_t n = output->element_count();
    if (in.operand_ids.size() >= 3) {
      flops = cost_add(flops, n);
      detail += " +bias";
    }
    if (auto side = cfg.at({"cudnn_conv_backend_config", "side_input_scale"}))
      if (auto s = as_double(*side); s && *s != 0.0) {
        flops = cost_add(flops, cost_mul(n, 2));
        detail += " +side input";
      }
    const std::string_view act =
        as_string(cfg.at({"cudnn_conv_backend_config", "activation_mode"}));
    if (!act.empty() && act != "kNone" && act != "NONE") {
      if (act.find("Relu") != std::string_view::npos || act.find("RELU") != std::string_view::npos)
        flops = cost_add(flops, n);
      else
        transcendentals = cost_add(transcendentals, n);
      detail += " +activation";
    }
  }
  cost.source = CostSource::kCustomCall;
  cost.flops = flops;
  cost.transcendentals = transcendentals;
  cost.compute = matrix_compute_type(op0->shape.element_type, in.operand_precision);
  cost.bytes_accessed = cost_add(operand_bytes(m, in), result_bytes_without_workspace(in.shape));
  cost.detail = std::move(detail);
  return cost;
}

// The (query, key) pairs an attention mask keeps, for Sq queries and Sk keys. `diagonal` is the
// key index the first query may reach under a causal mask (0 top-left, Sk - Sq bottom-right);
// `window` > 0 keeps only the last `window` keys up to the diagonal.
// Sequence lengths past this are not real (a corrupt config): counting pairs one query at a time
// must stay bounded.
constexpr uint64_t kMaxSequence = uint64_t{1} << 24;

uint64_t attention_pairs(uint64_t sq, uint64_t sk, bool causal, int64_t diagonal, int64_t window) {
  if (!causal && window <= 0) return cost_mul(sq, sk);
  uint64_t pairs = 0;
  const auto skl = static_cast<int64_t>(sk);
  for (uint64_t i = 0; i < sq; ++i) {
    int64_t hi = causal ? static_cast<int64_t>(i) + diagonal : skl - 1;
    hi = std::min(hi, skl - 1);
    int64_t lo = window > 0 ? hi - window + 1 : 0;
    lo = std::max<int64_t>(lo, 0);
    if (hi >= lo) pairs += static_cast<uint64_t>(hi - lo + 1);
  }
  return pairs;
}

// FLOPs of an attention from its sizes: two products per kept (query, key) pair forward, five
// backward (the score product again, then dV, dP, dQ and dK).
uint64_t attention_flops(uint64_t batch_heads, uint64_t pairs, uint64_t d_qk, uint64_t d_v,
                         bool backward) {
  const uint64_t per_pair =
      backward ? cost_add(cost_mul(3, d_qk), cost_mul(2, d_v)) : cost_add(d_qk, d_v);
  return cost_mul(cost_mul(2, batch_heads), cost_mul(pairs, per_pair));
}

OpCost cudnn_attention(const HloModule& m, const HloInstruction& in, OpCost cost) {
  JsonConfig cfg(in.backend_config);
  const std::vector<int64_t> bnts =
      int_list(cfg.at({"cudnn_fmha_backend_config", "intermediate_tensor_shape", "dimensions"}));
  const HloInstruction* q = m.operand(in, 0);
  const HloInstruction* k = m.operand(in, 1);
  const HloInstruction* v = m.operand(in, 2);
  if (bnts.size() != 4 || !q || !k || !v ||
      std::any_of(bnts.begin(), bnts.end(), [](int64_t x) { return x <= 0; })) {
    cost.detail = "cuDNN attention without the score shape in its config";
    return cost;
  }
  const std::string_view mask = as_string(cfg.at({"cudnn_fmha_backend_config", "mask_type"}));
  if (mask.find("PADDING") != std::string_view::npos) {
    cost.detail = "cuDNN attention with a padding mask: the lengths are only known at run time";
    return cost;
  }
  bool causal = mask.find("CAUSAL") != std::string_view::npos;
  if (auto c = cfg.at({"cudnn_fmha_backend_config", "is_causal_mask"})) {
    bool b = false;
    if (c->get(b) == simdjson::SUCCESS && b) causal = true;
  }
  int64_t window = 0;
  if (auto w = cfg.at({"cudnn_fmha_backend_config", "sliding_window_length"}))
    window = as_int(*w).value_or(0);
  const auto b = static_cast<uint64_t>(bnts[0]), h = static_cast<uint64_t>(bnts[1]);
  const auto sq = static_cast<uint64_t>(bnts[2]), sk = static_cast<uint64_t>(bnts[3]);
  if (sq > kMaxSequence || sk > kMaxSequence) {
    cost.detail = "cuDNN attention with an implausible score shape";
    return cost;
  }
  const uint64_t bhs = cost_mul(cost_mul(b, h), sq);
  const uint64_t q_n = q->shape.element_count(), k_n = k->shape.element_count();
  const uint64_t v_n = v->shape.element_count();
  if (bhs == 0 || q_n % bhs != 0 || k_n == 0) {
    cost.detail = "cuDNN attention whose operands do not fit its score shape";
    return cost;
  }
  const uint64_t d_qk = q_n / bhs;
  if (cost_mul(d_qk, v_n) % k_n != 0) {
    cost.detail = "cuDNN attention whose operands do not fit its score shape";
    return cost;
  }
  const uint64_t d_v = cost_mul(d_qk, v_n) / k_n;
  const bool backward = in.custom_call_target.find("Backward") != std::string_view::npos;
  const uint64_t pairs = attention_pairs(sq, sk, causal, 0, causal ? window : 0);
  cost.source = CostSource::kCustomCall;
  cost.flops = attention_flops(cost_mul(b, h), pairs, d_qk, d_v, backward);
  cost.compute = matrix_compute_type(q->shape.element_type, in.operand_precision);
  cost.bytes_accessed = cost_add(operand_bytes(m, in), result_bytes_without_workspace(in.shape));
  cost.detail = std::string("cudnn fmha ") + (backward ? "backward" : "forward") +
                (causal ? " causal" : "") + (causal && window > 0 ? " window" : "");
  return cost;
}

// Transformer Engine's JAX FFI custom calls carry their sizes as attributes.
OpCost te_attention(const HloModule& m, const HloInstruction& in, OpCost cost) {
  const std::string_view a = in.backend_config;
  auto attr = [&](std::string_view key) { return mlir_int_attr(a, key); };
  const auto batch = attr("input_batch");
  const auto sq = attr("q_max_seqlen");
  const auto sk = attr("kv_max_seqlen");
  const auto heads = attr("attn_heads");
  auto d_qk = attr("qk_head_dim");
  auto d_v = attr("v_head_dim");
  if (!d_qk) d_qk = attr("head_dim");
  if (!d_v) d_v = d_qk;
  const auto mask = attr("mask_type");
  const auto layout = attr("qkv_layout");
  if (!batch || !sq || !sk || !heads || !d_qk || !d_v || !mask || *batch <= 0 || *sq <= 0 ||
      *sk <= 0 || *heads <= 0 || *d_qk <= 0 || *d_v <= 0 ||
      static_cast<uint64_t>(*sq) > kMaxSequence || static_cast<uint64_t>(*sk) > kMaxSequence) {
    cost.detail = "Transformer Engine attention without its size attributes";
    return cost;
  }
  // NVTE_QKV_Layout: THD layouts (ragged sequences) are 10-14, 17, 18, 23 and 24.
  if (layout && ((*layout >= 10 && *layout <= 14) || *layout == 17 || *layout == 18 ||
                 *layout == 23 || *layout == 24)) {
    cost.detail =
        "Transformer Engine attention on ragged (THD) sequences: lengths known at run time";
    return cost;
  }
  // NVTE_Mask_Type: 0 none, 1 padding, 2 causal (top-left), 3 padding+causal, 4 causal
  // bottom-right, 5 padding+causal bottom-right.
  if (*mask == 1 || *mask == 3 || *mask == 5) {
    cost.detail = "Transformer Engine attention with a padding mask: lengths known at run time";
    return cost;
  }
  const int64_t left = attr("window_size_left").value_or(-1);
  const int64_t right = attr("window_size_right").value_or(-1);
  const bool causal = *mask == 2 || *mask == 4;
  if (!(left < 0 && (right < 0 || (causal && right == 0)))) {
    cost.detail = "Transformer Engine attention with a sliding window";
    return cost;
  }
  const int64_t diagonal = *mask == 4 ? *sk - *sq : 0;
  const bool backward = in.custom_call_target.find("backward") != std::string_view::npos;
  const uint64_t pairs =
      attention_pairs(static_cast<uint64_t>(*sq), static_cast<uint64_t>(*sk), causal, diagonal, 0);
  const HloInstruction* q = m.operand(in, 0);
  cost.source = CostSource::kCustomCall;
  cost.flops =
      attention_flops(cost_mul(static_cast<uint64_t>(*batch), static_cast<uint64_t>(*heads)), pairs,
                      static_cast<uint64_t>(*d_qk), static_cast<uint64_t>(*d_v), backward);
  cost.compute = q ? matrix_compute_type(q->shape.element_type, 0) : ComputeType::kBf16;
  cost.bytes_accessed = cost_add(operand_bytes(m, in), result_bytes_without_workspace(in.shape));
  cost.detail = std::string("te fused attention ") + (backward ? "backward" : "forward") +
                (*mask == 2   ? " causal"
                 : *mask == 4 ? " causal bottom-right"
                              : "");
  return cost;
}

// A matrix product of the first two operands, when their shapes make one with the result:
// [..., M, K] x [..., K, N] -> [..., M, N] (or with the right operand given as [..., N, K]).
bool matmul_from_shapes(const HloShape& a, const HloShape& b, const HloShape& out,
                        uint64_t& flops) {
  const auto& ad = a.dimensions;
  const auto& bd = b.dimensions;
  const auto& od = out.dimensions;
  if (ad.size() < 2 || ad.size() != bd.size() || ad.size() != od.size()) return false;
  const size_t r = ad.size();
  for (size_t i = 0; i + 2 < r; ++i)
    if (ad[i] != bd[i] || ad[i] != od[i]) return false;
  const int64_t m = ad[r - 2], k = ad[r - 1];
  int64_t n = 0;
  if (bd[r - 2] == k && od[r - 1] == bd[r - 1])
    n = bd[r - 1];
  else if (bd[r - 1] == k && od[r - 1] == bd[r - 2])
    n = bd[r - 2];
  if (n <= 0 || od[r - 2] != m || k <= 0) return false;
  flops = cost_mul(cost_mul(2, out.element_count()), static_cast<uint64_t>(k));
  return true;
}

OpCost kernel_call(const HloModule& m, const HloInstruction& in, OpCost cost) {
  JsonConfig cfg(in.backend_config);
  // Pallas on TPU writes the kernel author's cost estimate into the config.
  std::optional<element> estimate = cfg.at({"custom_call_config", "cost_estimate"});
  if (!estimate) estimate = cfg.at({"cost_estimate"});
  if (estimate) {
    simdjson::dom::object o;
    element f, bytes, tr;
    if (estimate->get(o) == simdjson::SUCCESS && o.at_key("flops").get(f) == simdjson::SUCCESS &&
        o.at_key("bytes_accessed").get(bytes) == simdjson::SUCCESS) {
      auto fv = as_int(f), bv = as_int(bytes);
      if (fv && bv && *fv >= 0 && *bv >= 0) {
        cost.source = CostSource::kCustomCall;
        cost.flops = static_cast<uint64_t>(*fv);
        cost.bytes_accessed = static_cast<uint64_t>(*bv);
        if (o.at_key("transcendentals").get(tr) == simdjson::SUCCESS)
          cost.transcendentals =
              static_cast<uint64_t>(std::max<int64_t>(as_int(tr).value_or(0), 0));
        cost.detail = "kernel cost estimate";
        if (custom_call_kind(in.custom_call_target, in.backend_config) != CustomCallKind::kOther)
          if (const HloInstruction* a = m.operand(in, 0))
            cost.compute = matrix_compute_type(a->shape.element_type, 0);
        return cost;
      }
    }
  }
  const std::string_view name = kernel_name(in.backend_config);
  const CustomCallKind kind = custom_call_kind(in.custom_call_target, in.backend_config);
  const HloInstruction* a = m.operand(in, 0);
  const HloInstruction* b = m.operand(in, 1);
  uint64_t flops = 0;
  if (kind == CustomCallKind::kGemm && a && b && in.operand_ids.size() == 2 &&
      matmul_from_shapes(a->shape, b->shape, result_array(in.shape), flops)) {
    cost.source = CostSource::kCustomCall;
    cost.flops = flops;
    cost.compute = matrix_compute_type(a->shape.element_type, 0);
    cost.bytes_accessed = cost_add(operand_bytes(m, in), in.shape.byte_size());
    cost.detail = "matmul kernel '" + std::string(name) + "' from its shapes";
    return cost;
  }
  if (kind == CustomCallKind::kAttention) {
    cost.detail =
        "attention kernel '" + std::string(name) + "': its masking is not stated in the HLO";
  } else {
    cost.detail = "custom call '" + std::string(in.custom_call_target) +
                  (name.empty() ? std::string() : "' kernel '" + std::string(name)) +
                  "' has no cost model";
  }
  return cost;
}

}  // namespace

CustomCallKind custom_call_kind(std::string_view target, std::string_view backend_config) {
  if (is_gemm_target(target)) return CustomCallKind::kGemm;
  if (is_conv_target(target)) return CustomCallKind::kConvolution;
  if (is_cudnn_attention_target(target) || is_te_attention_target(target))
    return CustomCallKind::kAttention;
  // Anything else by the words of its target and of the kernel name in its config.
  const std::string_view name = kernel_name(backend_config);
  auto says = [&](std::initializer_list<std::string_view> words) {
    return has_word(target, words) || has_word(name, words);
  };
  if (says({"attention", "attn", "flash", "fmha", "mha", "sdpa", "splash", "paged"}))
    return CustomCallKind::kAttention;
  if (says({"conv", "convolution", "conv1d", "conv2d", "conv3d"}))
    return CustomCallKind::kConvolution;
  if (says({"matmul", "gemm", "gemv", "dot", "einsum"})) return CustomCallKind::kGemm;
  return CustomCallKind::kOther;
}

OpCost custom_call_cost(const HloModule& module, const HloInstruction& instr) {
  OpCost cost;
  const std::string_view t = instr.custom_call_target;
  if (is_gemm_target(t)) return gemm(module, instr, std::move(cost));
  if (is_conv_target(t)) return convolution(module, instr, std::move(cost));
  if (is_cudnn_attention_target(t)) return cudnn_attention(module, instr, std::move(cost));
  if (is_te_attention_target(t)) return te_attention(module, instr, std::move(cost));
  return kernel_call(module, instr, std::move(cost));
}

}  // namespace jaxprof
