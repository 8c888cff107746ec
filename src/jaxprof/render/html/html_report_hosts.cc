#include "jaxprof/render/html/html_report_hosts.h"

#include "jaxprof/analysis/critical_path/critical_path.h"
#include "jaxprof/analysis/steps/steps.h"
#include "jaxprof/analysis/summary/summary.h"
#include "jaxprof/render/html/roofline_html.h"

namespace jaxprof {

void HtmlReportHosts::add(size_t host, const Profile& profile) {
  Host h;
  h.roofline = compute_roofline_part(profile, {});
  h.memory = compute_memory_part(profile, {}, &programs_);
  std::lock_guard<std::mutex> hold(lock_);
  if (hosts_.size() <= host) hosts_.resize(host + 1);
  hosts_[host] = std::move(h);
  // Hosts arrive nearly in order: each is cut once those before it are in, so only the few
  // being read at once wait whole.
  while (settled_ < hosts_.size() && hosts_[settled_]) settle(*hosts_[settled_++]);
}

void HtmlReportHosts::settle(Host& h) {
  // A device's place counts only devices that stay in the result before it: a host with device
  // planes drops the CPU backend's hosts (merge_roofline_parts), and then their cuts do not
  // matter.
  RooflinePart& r = h.roofline;
  size_t& before = r.cpu_backend ? cpu_devices_ : plane_devices_;
  for (RooflineDevice& d : r.devices) keep_shown(d, before++, top_);
}

void HtmlReportHosts::finish(HtmlReportData& d) {
  std::vector<RooflinePart> roofline;
  std::vector<MemoryPart> memory;
  for (std::optional<Host>& h : hosts_) {
    if (!h) continue;  // not read (--keep-going)
    roofline.push_back(std::move(h->roofline));
    memory.push_back(std::move(h->memory));
  }
  hosts_.clear();
  const size_t n = roofline.size();
  d.roofline = merge_roofline_parts(std::move(roofline), {});
  d.memory = merge_memory_parts(std::move(memory), {});
  d.missing_critical_path =
      n > 1 ? "No critical path: " + critical_path_unavailable(n) + "."
            : "No critical path: the hosts were read one by one (`jaxprof critical-path` reads "
              "them together).";
}

void html_report_event_sections(const Profile& profile, HtmlReportData& d) {
  d.roofline = compute_roofline(profile, {});
  d.memory = compute_memory(profile, {});
  if (compute_steps(profile).steps.empty()) {
    // As summary has it: the one window would be the whole capture, and the costliest graph.
    d.missing_critical_path =
        "The profile marks no steps: `jaxprof critical-path` follows all its device work as one "
        "window.";
  } else {
    CriticalPathOptions cp;
    cp.rank = false;  // the ranked changes are the command's: their replays cost more
    d.critical_path = compute_critical_path(profile, cp);
    // Its segments are views of the profile, and the page shows none of them.
    for (CriticalStep& s : d.critical_path->steps) std::vector<PathSegment>().swap(s.path);
  }
}

}  // namespace jaxprof
