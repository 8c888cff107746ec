#include "jaxprof/analysis/cost/missing_hlo.h"

#include <fmt/format.h>

#include <string_view>

namespace jaxprof {

void MissingHloTally::count(const RooflineOp& op) {
  n_.total_ps += op.self_ps;
  const std::string_view detail = op.detail;
  if (op.source == CostSource::kUnknown && detail == kNoHloInProfile) {
    ++n_.no_hlo_ops;
    n_.no_hlo_ps += op.self_ps;
  } else if (detail.ends_with(kMatchedByKernelName)) {
    ++n_.by_kernel_name_ops;
    n_.by_kernel_name_ps += op.self_ps;
  }
}

void MissingHloTally::add(const MissingHloCounts& other) {
  n_.no_hlo_ops += other.no_hlo_ops;
  n_.by_kernel_name_ops += other.by_kernel_name_ops;
  n_.no_hlo_ps += other.no_hlo_ps;
  n_.by_kernel_name_ps += other.by_kernel_name_ps;
  n_.total_ps += other.total_ps;
}

void MissingHloTally::warn(std::vector<std::string>& warnings) const {
  auto ops = [](uint64_t n) { return fmt::format("{} op{}", n, n == 1 ? "" : "s"); };
  auto share = [&](int64_t ps) {
    const double pct =
        n_.total_ps > 0 ? 100.0 * static_cast<double>(ps) / static_cast<double>(n_.total_ps) : 0.0;
    return pct > 0 && pct < 0.05 ? std::string("<0.1%") : fmt::format("{:.1f}%", pct);
  };
  if (n_.no_hlo_ops > 0)
    warnings.push_back(fmt::format(
        "the profile carries no HLO (no HloProtos on /host:metadata, none embedded in the trace, "
        "no HLO files given): FLOPs, bytes, rates, bound and efficiency are unknown for {} naming "
        "an HLO op ({} of op time); give the programs' HLO (*.hlo.pb) beside the profile",
        ops(n_.no_hlo_ops), share(n_.no_hlo_ps)));
  if (n_.by_kernel_name_ops > 0)
    warnings.push_back(fmt::format(
        "kernel events without hlo_op: the HLO instruction of {} ({} of op time) was found by "
        "kernel name, as XLA names kernels after instructions (`detail` says so); `ops` groups "
        "them under the kernel name",
        ops(n_.by_kernel_name_ops), share(n_.by_kernel_name_ps)));
}

}  // namespace jaxprof
