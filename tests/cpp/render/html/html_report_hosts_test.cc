// A report of several hosts read one by one (each host's roofline and memory worked out while it
// is read, then merged) shows what the report of one profile of all the hosts shows: every
// section but the critical path, which says why it is missing.
#include "jaxprof/render/html/html_report_hosts.h"

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>

#include "jaxprof/formats/load.h"
#include "jaxprof/pipeline/load_partials.h"
#include "jaxprof/render/html/html_report.h"
#include "jaxprof/render/html/html_report_partials.h"
#include "jaxprof/render/html/roofline_html.h"
#include "test_paths.h"

namespace jaxprof {
namespace {

namespace fs = std::filesystem;

// Files named `host`.xplane.pb in a fresh directory, linked to `target`s, in the order given.
std::vector<std::string> host_files(const std::string& name,
                                    const std::vector<std::pair<std::string, std::string>>& hosts) {
  const fs::path dir = fs::path(::testing::TempDir()) / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::vector<std::string> out;
  for (const auto& [host, target] : hosts) {
    const fs::path link = dir / (host + ".xplane.pb");
    fs::create_symlink(fs::absolute(target), link);
    out.push_back(link.string());
  }
  return out;
}

// Each <section id=...> of a page, by id.
std::map<std::string, std::string> sections(const std::string& html) {
  std::map<std::string, std::string> out;
  const std::string open = "<section id=\"";
  for (size_t at = html.find(open); at != std::string::npos; at = html.find(open, at + 1)) {
    const size_t id_end = html.find('"', at + open.size());
    const size_t end = html.find("</section>", id_end);
    out[html.substr(at + open.size(), id_end - at - open.size())] =
        html.substr(id_end, end - id_end);
  }
  return out;
}

void expect_report_of_profile(const std::vector<std::string>& paths) {
  HtmlReportOptions o;
  o.source = "run";
  LoadedProfile whole;
  load_profile(paths, {}, whole);
  const std::string want = render_html_report(whole.profile, o);

  HtmlReportHosts hosts(o.top);
  std::atomic<size_t> added{0};
  PartialLoadOptions lo;
  lo.extract = html_report_extract(o.steady);
  lo.import.threads = 3;  // hosts arrive out of order
  lo.each_profile = [&](size_t host, const Profile& p) {
    hosts.add(host, p);
    ++added;
  };
  LoadedPartials loaded;
  load_partials(paths, lo, loaded);
  EXPECT_EQ(added, whole.profile.hosts.size());
  HtmlReportData d = html_report_data_from_partials(loaded.set, o.steady);
  hosts.finish(d);
  const std::string got = render_html_report(d, o);

  const auto w = sections(want), g = sections(got);
  ASSERT_EQ(g.size(), w.size());
  EXPECT_NE(w.at("roofline").find("roofline-table"), std::string::npos);
  for (const auto& [id, body] : w) {
    if (id == "critical-path") {
      EXPECT_NE(g.at(id).find("needs their events together"), std::string::npos);
      continue;
    }
    EXPECT_EQ(g.at(id), body) << id;
  }
}

TEST(HtmlReportHosts, MixedHostsGiveTheRooflineAndMemoryOfTheirProfile) {
  // GPUs with allocator events and programs, a TPU, and the CPU backend (whose devices a set with
  // device planes drops), each on its own clock; an HLO file beside them, which each host reads.
  const std::string conv = testing::fixture("xplane/mi300x_jax_conv.xplane.pb");
  const std::string gemm = testing::fixture("xplane/mi300x_jax_gemm.xplane.pb");
  const std::string tpu = testing::fixture("xplane/tpu_4chip_inference.xplane.pb");
  const std::string hlo = testing::fixture("xplane/jit_forward_3d_conv(15).hlo_proto.pb");
  for (const std::string& f : {conv, gemm, tpu, hlo})
    if (!fs::exists(f)) GTEST_SKIP() << f << " not found";
  std::vector<std::string> paths =
      host_files("report_hosts_mixed",
                 {{"a", gemm},
                  {"b", testing::test_data("jax_cpu_8dev/plugins/profile/session/vm.xplane.pb")},
                  {"c", conv},
                  {"d", tpu}});
  paths.push_back(hlo);
  expect_report_of_profile(paths);
}

TEST(HtmlReportHosts, ManyCpuHostsAreCutToWhatThePageShows) {
  // 12 hosts of 8 devices: more devices than the roofline draws, so each host's ops are cut as
  // it is read.
  std::vector<std::pair<std::string, std::string>> hosts;
  for (int i = 0; i < 12; ++i)
    hosts.push_back({"w" + std::to_string(10 + i),
                     testing::test_data("jax_cpu_8dev/plugins/profile/session/vm.xplane.pb")});
  static_assert(12 * 8 > kRooflineCharts);
  expect_report_of_profile(host_files("report_hosts_cpu", hosts));
}

TEST(HtmlReportHosts, RooflineTableListsItsFirstDevices) {
  RooflineResult r;
  for (size_t i = 0; i < kRooflineTableDevices + 3; ++i) {
    RooflineDevice& d = r.devices.emplace_back();
    d.device = "/device:X:" + std::to_string(i);
    for (int k = 0; k < 3; ++k) d.ops.push_back({.name = "op" + std::to_string(k)});
  }
  const RooflineHtml html = roofline_html(r, 2);
  EXPECT_EQ(html.table.rows.size(), 2 * kRooflineTableDevices);
  EXPECT_NE(html.charts.find("3 more devices neither drawn nor listed"), std::string::npos);
  RooflineDevice cut = r.devices[0];
  keep_shown(cut, kRooflineCharts - 1, 2);
  EXPECT_EQ(cut.ops.size(), 3u);  // drawn: every op
  keep_shown(cut, kRooflineCharts, 2);
  EXPECT_EQ(cut.ops.size(), 2u);  // listed only
  keep_shown(cut, kRooflineTableDevices, 2);
  EXPECT_TRUE(cut.ops.empty());
}

}  // namespace
}  // namespace jaxprof
