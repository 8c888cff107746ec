#include "jaxprof/analysis/cost/missing_hlo.h"

#include <fmt/format.h>

#include <string_view>

namespace jaxprof {

void MissingHloTally::count(const RooflineOp& op) {
  total_ps_ += op.self_ps;
  const std::string_view detail = op.detail;
  if (op.source == CostSource::kUnknown && detail == kNoHloInProfile) {
    ++no_hlo_ops_;
    no_hlo_ps_ += op.self_ps;
  } else if (detail.ends_with(kMatchedByKernelName)) {
    ++by_kernel_name_ops_;
    by_kernel_name_ps_ += op.self_ps;
  }
}

void MissingHloTally::warn(std::vector<std::string>& warnings) const {
  auto ops = [](uint64_t n) { return fmt::format("{} op{}", n, n == 1 ? "" : "s"); };
  auto share = [&](int64_t ps) {
    const double pct =
        total_ps_ > 0 ? 100.0 * static_cast<double>(ps) / static_cast<double>(total_ps_) : 0.0;
    return pct > 0 && pct < 0.05 ? std::string("<0.1%") : fmt::format("{:.1f}%", pct);
  };
  if (no_hlo_ops_ > 0)
    warnings.push_back(fmt::format(
        "the profile carries no HLO (no HloProtos on /host:metadata, none embedded in the trace, "
        "no HLO files given): FLOPs, bytes, rates, bound and efficiency are unknown for {} naming "
        "an HLO op ({} of op time); give the programs' HLO (*.hlo.pb) beside the profile",
        ops(no_hlo_ops_), share(no_hlo_ps_)));
  if (by_kernel_name_ops_ > 0)
    warnings.push_back(fmt::format(
        "kernel events without hlo_op: the HLO instruction of {} ({} of op time) was found by "
        "kernel name, as XLA names kernels after instructions (`detail` says so); `ops` groups "
        "them under the kernel name",
        ops(by_kernel_name_ops_), share(by_kernel_name_ps_)));
}

}  // namespace jaxprof
