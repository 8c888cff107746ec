// Self times of every op line of a profile on the device clock against the same lines on the
// timeline clock: what nesting on the device clock costs (issue: at most 10% more).
//
//   self_time_clocks PROFILE [REPEATS]
//
// Prints, per clock, the best of REPEATS passes over every line that carries a device clock,
// and the deepest nesting met (the most events open at once on that clock).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <vector>

#include "jaxprof/analysis/ops/self_time.h"
#include "jaxprof/common/error.h"
#include "jaxprof/formats/load.h"

namespace {

double best_pass_ms(const jaxprof::Profile& p, const std::vector<uint32_t>& lines, bool device,
                    int repeats) {
  std::vector<int64_t> self;
  double best = std::numeric_limits<double>::infinity();
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    for (uint32_t li : lines) {
      jaxprof::Line line = p.lines[li];
      line.device_clock = device;
      jaxprof::compute_op_self_times(p.events, line, self);
    }
    best = std::min(
        best,
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: self_time_clocks PROFILE [REPEATS]\n");
    return 2;
  }
  const int repeats = argc > 2 ? std::max(1, std::atoi(argv[2])) : 20;
  jaxprof::LoadedProfile loaded;
  try {
    jaxprof::load_profile({argv[1]}, {}, loaded);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "self_time_clocks: %s\n", e.what());
    return 2;
  }
  const jaxprof::Profile& p = loaded.profile;
  p.require_all_lines();
  std::vector<uint32_t> lines;
  uint64_t events = 0;
  for (uint32_t li = 0; li < p.lines.size(); ++li) {
    if (!p.lines[li].device_clock) continue;
    lines.push_back(li);
    events += p.lines[li].event_count;
  }
  if (lines.empty()) {
    std::printf("no line of %s carries a device clock\n", argv[1]);
    return 0;
  }
  const double timeline = best_pass_ms(p, lines, false, repeats);
  const double device = best_pass_ms(p, lines, true, repeats);
  std::printf("%zu lines, %llu events on the device clock; best of %d passes\n", lines.size(),
              static_cast<unsigned long long>(events), repeats);
  std::printf("timeline clock: %.2f ms\ndevice clock:   %.2f ms (%.2fx)\n", timeline, device,
              device / timeline);
  return 0;
}
