#include "jaxprof/analysis/cost/hardware_peaks.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>

#include "jaxprof/analysis/cost/hardware_peaks_table.h"
#include "jaxprof/common/error.h"

namespace jaxprof {
namespace {

// A GPU's own memory_bandwidth stat stands when the datasheet agrees within this much.
constexpr double kBandwidthAgreement = 0.15;

size_t index(ComputeType t) { return static_cast<size_t>(t); }

DeviceFacts facts_of(const Profile& p, uint32_t plane) {
  DeviceFacts f;
  const Plane& pl = p.planes[plane];
  f.tpu = pl.kind == PlaneKind::kTpu;
  f.gpu = pl.kind == PlaneKind::kGpu;
  auto text = [&](std::string_view name) -> std::string_view {
    auto v = p.plane_stat(plane, name);
    return v && v->is_text() ? v->str : std::string_view();
  };
  auto integer = [&](std::string_view name) -> int64_t {
    auto v = p.plane_stat(plane, name);
    return v ? v->as_int().value_or(0) : 0;
  };
  f.vendor = text("device_vendor");
  f.type_string = text("device_type_string");
  f.cc_major = integer("compute_cap_major");
  f.cc_minor = integer("compute_cap_minor");
  f.cores = integer("core_count");
  f.clock_khz = integer("clock_rate");
  f.memory_bytes = static_cast<uint64_t>(std::max<int64_t>(integer("memory_size"), 0));
  return f;
}

double plane_double(const Profile& p, uint32_t plane, std::string_view name) {
  auto v = p.plane_stat(plane, name);
  if (!v) return 0;
  double d = v->as_double().value_or(0);
  return std::isfinite(d) && d > 0 ? d : 0;
}

void set_table(DevicePeaks& out, const KnownAccelerator& a, const std::string& source) {
  const double v[] = {a.fp32, a.fp64, a.fp32, a.tf32, a.bf16, a.fp16, a.fp8, a.int8};
  for (size_t i = 0; i < kComputeTypes; ++i) {
    if (v[i] <= 0 || out.flops_per_s[i] > 0) continue;
    out.flops_per_s[i] = v[i] * 1e12;
    out.flops_source[i] = source;
  }
}

}  // namespace

double DevicePeaks::flops_for(ComputeType type, ComputeType& used) const {
  auto have = [&](ComputeType t) { return flops_per_s[index(t)] > 0; };
  using T = ComputeType;
  std::array<ComputeType, 3> chain{type, type, type};
  switch (type) {
    case T::kTf32:
      chain = {T::kTf32, T::kFp32, T::kVector};
      break;
    case T::kFp32:
      chain = {T::kFp32, T::kVector, T::kVector};
      break;
    case T::kVector:
      chain = {T::kVector, T::kFp32, T::kFp32};
      break;
    case T::kFp64:
      break;
    case T::kBf16:
      chain = {T::kBf16, T::kFp16, T::kFp16};
      break;
    case T::kFp16:
      chain = {T::kFp16, T::kBf16, T::kBf16};
      break;
    case T::kFp8:
      chain = {T::kFp8, T::kBf16, T::kFp16};
      break;
    case T::kInt8:
      chain = {T::kInt8, T::kBf16, T::kFp16};
      break;
  }
  for (ComputeType t : chain)
    if (have(t)) {
      used = t;
      return flops_per_s[index(t)];
    }
  // The headline figure: what a TPU's peak_teraflops_per_second is (XProf holds every op to it).
  for (ComputeType t : {ComputeType::kBf16, ComputeType::kFp16, ComputeType::kFp32})
    if (have(t)) {
      used = t;
      return flops_per_s[index(t)];
    }
  used = type;
  return 0;
}

DevicePeaks device_peaks(const Profile& p, uint32_t plane, const PeakOverrides& overrides) {
  DevicePeaks out;
  // 1. Flags.
  for (size_t i = 0; i < kComputeTypes; ++i)
    if (overrides.flops_per_s[i] > 0) {
      out.flops_per_s[i] = overrides.flops_per_s[i];
      out.flops_source[i] = "flag";
    }
  if (overrides.flops_per_s[index(ComputeType::kFp32)] > 0 &&
      overrides.flops_per_s[index(ComputeType::kVector)] == 0) {
    out.flops_per_s[index(ComputeType::kVector)] = overrides.flops_per_s[index(ComputeType::kFp32)];
    out.flops_source[index(ComputeType::kVector)] = "flag";
  }
  if (overrides.bytes_per_s > 0) {
    out.bytes_per_s = overrides.bytes_per_s;
    out.bytes_source = "flag";
  }

  // 2. The plane's own peak stats (TPU planes carry them).
  const DeviceFacts facts = facts_of(p, plane);
  const double stat_tflops = plane_double(p, plane, "peak_teraflops_per_second");
  if (stat_tflops > 0 && out.flops_per_s[index(ComputeType::kBf16)] == 0) {
    out.flops_per_s[index(ComputeType::kBf16)] = stat_tflops * 1e12;
    out.flops_source[index(ComputeType::kBf16)] = "device stat peak_teraflops_per_second";
  }
  const double stat_hbm = plane_double(p, plane, "peak_hbm_bw_gigabytes_per_second");
  if (stat_hbm > 0 && out.bytes_per_s == 0) {
    out.bytes_per_s = stat_hbm * 1e9;
    out.bytes_source = "device stat peak_hbm_bw_gigabytes_per_second";
  }

  // 3. The table, for a device the flag names or the stats identify.
  const KnownAccelerator* known = nullptr;
  if (!overrides.model.empty()) {
    known = find_accelerator(overrides.model);
    if (!known)
      throw InputError("", "unknown --device-model '" + overrides.model + "' (known: " +
                               fmt::format("{}", fmt::join(known_device_models(), ", ")) + ")");
  } else {
    known = identify_accelerator(facts);
  }
  const double stat_bw = plane_double(p, plane, "memory_bandwidth");  // bytes/s (GPU)
  if (known) {
    out.model = known->name;
    const std::string source = std::string("table: ") + known->source;
    set_table(out, *known, source);
    if (out.bytes_per_s == 0 && known->hbm_gbps > 0) {
      const double table_bw = known->hbm_gbps * 1e9;
      if (stat_bw > 0 && std::abs(stat_bw - table_bw) <= kBandwidthAgreement * table_bw) {
        out.bytes_per_s = stat_bw;
        out.bytes_source = "device stat memory_bandwidth";
      } else {
        out.bytes_per_s = table_bw;
        out.bytes_source = source;
        if (stat_bw > 0)
          out.notes.push_back(fmt::format(
              "the device's memory_bandwidth stat says {:.4g} TB/s, the {} datasheet {:.4g} TB/s: "
              "using the datasheet (--peak-gbps overrides)",
              stat_bw / 1e12, known->name, table_bw / 1e12));
      }
    }
  }

  // 4. Derived from the plane's stats: cores x clock x FLOPs per core per clock.
  const PerCoreRates rates = per_core_rates(facts);
  if (rates.architecture && facts.cores > 0 && facts.clock_khz > 0) {
    const double per_clock = static_cast<double>(facts.cores) * facts.clock_khz * 1e3;
    const double v[] = {rates.fp32, rates.fp64, rates.fp32, rates.tf32,
                        rates.bf16, rates.fp16, rates.fp8,  rates.int8};
    for (size_t i = 0; i < kComputeTypes; ++i) {
      if (v[i] <= 0 || out.flops_per_s[i] > 0) continue;
      out.flops_per_s[i] = v[i] * per_clock;
      out.flops_source[i] =
          fmt::format("derived: core_count {} x clock_rate {:.4g} GHz x {} FLOP/clock ({})",
                      facts.cores, facts.clock_khz / 1e6, v[i], rates.architecture);
    }
  }
  if (out.bytes_per_s == 0 && stat_bw > 0) {
    out.bytes_per_s = stat_bw;
    out.bytes_source = "device stat memory_bandwidth";
  }
  if (p.planes[plane].kind == PlaneKind::kHostCpu) {
    bool any = out.bytes_per_s > 0;
    for (double f : out.flops_per_s) any |= f > 0;
    if (!any)
      out.notes.push_back(
          "CPU peaks are unknown: give --peak-tflops and --peak-gbps (or --device-model) for "
          "bounds and efficiencies");
  } else if (out.bytes_per_s == 0 || out.flops_per_s[index(ComputeType::kBf16)] +
                                             out.flops_per_s[index(ComputeType::kFp32)] ==
                                         0) {
    out.notes.push_back(
        "the device's peaks are not all known (no peak stats and not a known accelerator): give "
        "--device-model, --peak-tflops or --peak-gbps");
  }
  return out;
}

std::vector<std::string> known_device_models() {
  std::vector<std::string> out;
  for (const KnownAccelerator& a : known_accelerators()) out.emplace_back(a.key);
  return out;
}

bool parse_compute_type(std::string_view name, ComputeType& out) {
  for (ComputeType t :
       {ComputeType::kVector, ComputeType::kFp64, ComputeType::kFp32, ComputeType::kTf32,
        ComputeType::kBf16, ComputeType::kFp16, ComputeType::kFp8, ComputeType::kInt8}) {
    if (name == compute_type_name(t)) {
      out = t;
      return true;
    }
  }
  return false;
}

bool parse_peak_flops(std::string_view text, PeakOverrides& out) {
  const size_t eq = text.find('=');
  std::string_view type_name = eq == std::string_view::npos ? "" : text.substr(0, eq);
  std::string_view number = eq == std::string_view::npos ? text : text.substr(eq + 1);
  double tflops = 0;
  auto r = std::from_chars(number.data(), number.data() + number.size(), tflops);
  if (r.ec != std::errc() || r.ptr != number.data() + number.size() || !(tflops > 0) ||
      !std::isfinite(tflops))
    return false;
  if (type_name.empty()) {
    // A bare number: every type the device would use (a CPU, a device with one rate).
    for (double& f : out.flops_per_s) f = tflops * 1e12;
    return true;
  }
  ComputeType t;
  if (!parse_compute_type(type_name, t)) return false;
  out.flops_per_s[index(t)] = tflops * 1e12;
  return true;
}

}  // namespace jaxprof
