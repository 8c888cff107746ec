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
  auto share = [&](int64_t ps) {
    return total_ps_ > 0 ? 100.0 * static_cast<double>(ps) / static_cast<double>(total_ps_) : 0.0;
  };
  if (no_hlo_ops_ > 0)
    warnings.push_back(fmt::format(
        "{} ops ({:.1f}% of op time) name an HLO op but the profile carries no HLO (no HloProtos "
        "on /host:metadata, none embedded in the trace, no HLO files given): their FLOPs, bytes, "
        "rates, bound and efficiency are unknown; give the programs' HLO (*.hlo.pb) beside the "
        "profile",
        no_hlo_ops_, share(no_hlo_ps_)));
  if (by_kernel_name_ops_ > 0)
    warnings.push_back(fmt::format(
        "{} ops ({:.1f}% of op time) run kernels whose events carry no hlo_op: their HLO "
        "instruction was found by kernel name, as XLA names kernels after instructions (`detail` "
        "says so); `ops` groups them under the kernel name and without a module",
        by_kernel_name_ops_, share(by_kernel_name_ps_)));
}

}  // namespace jaxprof
