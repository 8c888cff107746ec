// Partial files (`jaxprof partial`, formats/partial/partial.proto): decoded, written again and read back
// (the writer must reproduce what it reads), then given to every analysis that reads partials, as
// the commands do. The analyses trust what the reader accepted, so an index the reader let pass
// shows up there.
#include "fuzz_common.h"
#include "jaxprof/analysis/collectives/collectives.h"
#include "jaxprof/analysis/compile/compile.h"
#include "jaxprof/analysis/stats/diff.h"
#include "jaxprof/analysis/hosts/hosts.h"
#include "jaxprof/analysis/steps/modules.h"
#include "jaxprof/analysis/ops/ops.h"
#include "jaxprof/model/partial/partial.h"
#include "jaxprof/analysis/steps/steps.h"
#include "jaxprof/analysis/summary/summary.h"
#include "jaxprof/analysis/timeline/timeline.h"
#include "jaxprof/formats/partial/partial_file.h"

using namespace jaxprof;

namespace {

std::string rewritten(const std::vector<HostPartial>& hosts) {
  std::vector<const HostPartial*> all;
  for (const HostPartial& h : hosts) all.push_back(&h);
  return write_partial_file(all);
}

// Each analysis on its own: one that refuses the set (a part missing, say) leaves the others.
template <typename Analysis>
void run(Analysis&& analysis) {
  try {
    (void)analysis();
  } catch (const InputError& e) {
    fuzz::named(e);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const std::string path = "fuzz.partial";
  std::vector<HostPartial> hosts;
  try {
    hosts = read_partial_file(bytes, path);
  } catch (const InputError& e) {
    fuzz::named(e);
    return 0;
  }
  // What was accepted is written the same way twice: reading loses nothing the writer keeps.
  std::string once = rewritten(hosts);
  std::vector<HostPartial> again;
  try {
    again = read_partial_file(once, path);
  } catch (const InputError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    fuzz::check(false, "a partial file the writer made from an accepted one is refused");
  }
  fuzz::check(rewritten(again) == once, "reading a written partial file changes it");

  PartialSet set;
  try {
    set.add(std::move(hosts));
  } catch (const InputError& e) {
    fuzz::named(e);
    return 0;
  }
  run([&] { return summary_from_partials(set); });
  for (GroupBy g : {GroupBy::kHloOp, GroupBy::kKernel, GroupBy::kModule, GroupBy::kName,
                    GroupBy::kCategory, GroupBy::kOpcode}) {
    OpsOptions options;
    options.group_by = g;
    run([&] { return ops_from_partials(set, options); });
  }
  run([&] { return timeline_from_partials(set); });
  run([&] { return modules_from_partials(set); });
  run([&] { return collectives_from_partials(set, CollectivesOptions{}); });
  run([&] { return compile_from_partials(set); });
  run([&] { return steps_from_partials(set); });
  run([&] { return hosts_from_partials(set); });
  run([&] { return samples_from_partials(set); });
  return 0;
}
