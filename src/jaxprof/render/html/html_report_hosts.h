// `jaxprof report` of several hosts read one by one (pipeline/load_partials.h): the sections that
// need each host's events, the roofline and memory, are worked out from each host's profile while
// it is in memory, cut to what the page shows, and merged in host order, giving what
// render_html_report takes from a profile of all the hosts; the other sections come from the
// hosts' partials (html_report_partials.h). The critical path, which follows each step's events
// across the hosts, says why it is not shown, as `summary` does. Memory stays near that of the
// hosts being read, whatever their number.
#pragma once

#include <cstddef>
#include <mutex>
#include <optional>
#include <vector>

#include "jaxprof/analysis/cost/roofline.h"
#include "jaxprof/analysis/memory/memory.h"
#include "jaxprof/model/profile.h"
#include "jaxprof/render/html/html_report_data.h"

namespace jaxprof {

class HtmlReportHosts {
 public:
  explicit HtmlReportHosts(size_t top) : top_(top) {}
  // Any thread, several at once; `host`: its place in host order (each_profile's).
  void add(size_t host, const Profile& profile);
  // The roofline and memory of the hosts added, and why there is no critical path, into `d`.
  void finish(HtmlReportData& d);

 private:
  struct Host {
    RooflinePart roofline;
    MemoryPart memory;
  };
  void settle(Host& h);

  const size_t top_;
  ProgramMemoryCache programs_;
  std::mutex lock_;
  std::vector<std::optional<Host>> hosts_;
  // Hosts before this one have arrived and been cut: their devices' places in the roofline
  // are known (counted apart for the CPU backend's, which a host with device planes drops).
  size_t settled_ = 0;
  size_t cpu_devices_ = 0, plane_devices_ = 0;
};

// From one profile: the sections that need its events (roofline, memory, critical path), as
// render_html_report computes them. The result holds no view of the profile.
void html_report_event_sections(const Profile& profile, HtmlReportData& d);

}  // namespace jaxprof
