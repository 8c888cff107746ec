// Hosts kept in a temporary file and decoded one at a time: every analysis gives what it gives
// from the same hosts held in memory, the analyses of `summary` never decode every host at once,
// and a set read from host files is made this way.
#include "jaxprof/formats/partial/partial_spill.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>

#include "jaxprof/analysis/collectives/collectives.h"
#include "jaxprof/analysis/compile/compile.h"
#include "jaxprof/analysis/hosts/hosts.h"
#include "jaxprof/analysis/ops/ops.h"
#include "jaxprof/analysis/partial/extract_partials.h"
#include "jaxprof/analysis/steps/modules.h"
#include "jaxprof/analysis/summary/summary.h"
#include "jaxprof/analysis/timeline/timeline.h"
#include "jaxprof/common/error.h"
#include "jaxprof/formats/load.h"
#include "jaxprof/formats/partial/partial_file.h"
#include "jaxprof/pipeline/load_partials.h"
#include "jaxprof/render/text/collectives_render.h"
#include "jaxprof/render/text/compile_render.h"
#include "jaxprof/render/text/hosts_render.h"
#include "jaxprof/render/text/modules_render.h"
#include "jaxprof/render/text/ops_render.h"
#include "jaxprof/render/text/summary_render.h"
#include "jaxprof/render/text/timeline_render.h"
#include "test_paths.h"

namespace jaxprof {
namespace {

namespace fs = std::filesystem;
using testing::fixture;
using testing::test_data;

// Two hosts of the 8-device CPU capture (their collectives are matched across hosts, the second
// host's clock 3 ms later), a TPU host and a GPU host.
std::vector<HostPartial> four_hosts() {
  std::vector<HostPartial> out;
  auto add = [&](const std::string& path, const std::string& host, int64_t shift_ns) {
    LoadedProfile loaded;
    load_profile({path}, {}, loaded);
    std::vector<HostPartial> one = extract_partials(loaded.profile, {});
    one.front().host = host;
    one.front().base_ns += shift_ns;
    out.push_back(std::move(one.front()));
  };
  add(test_data("jax_cpu_8dev"), "b", 3'000'000);
  add(test_data("jax_cpu_8dev"), "a", 0);
  add(fixture("xplane/tpu_4chip_inference.xplane.pb"), "c", 0);
  add(fixture("xplane/mi300x_jax_gemm.xplane.pb"), "d", 0);
  return out;
}

PartialSet stored(const std::vector<HostPartial>& hosts) {
  auto spill = std::make_shared<PartialSpill>();
  for (const HostPartial& h : hosts) spill->put(spill->add_slot(), h);
  PartialSet set;
  set.add_stored(spill, spill->filled_slots());
  return set;
}

TEST(PartialSpill, AnalysesOfStoredHostsAreThoseOfHostsInMemory) {
  const std::vector<HostPartial> hosts = four_hosts();
  for (size_t drop : {size_t{2}, size_t{4}}) {  // the CPU hosts alone, then with device hosts
    std::vector<HostPartial> some(hosts.begin(), hosts.begin() + static_cast<ptrdiff_t>(drop));
    const PartialSet memory(some);
    const PartialSet set = stored(some);
    ASSERT_EQ(set.size(), some.size());
    EXPECT_EQ(set.heads().front().host, "a");  // ordered by host name
    const auto json = OutputFormat::kJson;
    EXPECT_EQ(render_summary(summary_from_partials(set), json),
              render_summary(summary_from_partials(memory), json));
    CollectivesOptions co;
    co.instances = true;
    EXPECT_EQ(render_collectives(collectives_from_partials(set, co), json),
              render_collectives(collectives_from_partials(memory, co), json));
    co.members = true;
    const CollectivesResult with = collectives_from_partials(set, co);
    const CollectivesResult want = collectives_from_partials(memory, co);
    ASSERT_EQ(with.instances.size(), want.instances.size());
    for (size_t i = 0; i < want.instances.size(); ++i) {
      ASSERT_EQ(with.instances[i].members.size(), want.instances[i].members.size());
      for (size_t m = 0; m < want.instances[i].members.size(); ++m) {
        EXPECT_EQ(with.instances[i].members[m].host, want.instances[i].members[m].host);
        EXPECT_EQ(with.instances[i].members[m].begin_ps, want.instances[i].members[m].begin_ps);
        EXPECT_EQ(with.instances[i].members[m].duration_ps,
                  want.instances[i].members[m].duration_ps);
      }
    }
    const ModulesOptions mo{.top_ops = 5, .steps = false};
    EXPECT_EQ(render_modules(modules_from_partials(set, mo), json),
              render_modules(modules_from_partials(memory, mo), json));
    EXPECT_EQ(render_timeline(timeline_from_partials(set), json),
              render_timeline(timeline_from_partials(memory), json));
    for (GroupBy by : {GroupBy::kHloOp, GroupBy::kModule, GroupBy::kCategory}) {
      OpsOptions oo;
      oo.group_by = by;
      EXPECT_EQ(render_ops(ops_from_partials(set, oo), json),
                render_ops(ops_from_partials(memory, oo), json));
    }
    EXPECT_EQ(render_compile(compile_from_partials(set), json),
              render_compile(compile_from_partials(memory), json));
    // Steps and the comparison of hosts (clock offsets, who arrived last) go host by host too.
    EXPECT_EQ(render_modules(modules_from_partials(set), json),
              render_modules(modules_from_partials(memory), json));
    EXPECT_EQ(render_hosts(hosts_from_partials(set), json),
              render_hosts(hosts_from_partials(memory), json));
    // None of those decoded every host at once.
    EXPECT_FALSE(set.decoded_all());
  }
}

TEST(PartialSpill, WithoutATemporaryDirectoryThePartialsStayInMemory) {
  const char* before = std::getenv("TMPDIR");
  const std::string saved = before ? before : "";
  setenv("TMPDIR", "/nonexistent/jaxprof-test", 1);
  auto spill = std::make_shared<PartialSpill>();
  if (before)
    setenv("TMPDIR", saved.c_str(), 1);
  else
    unsetenv("TMPDIR");
  std::vector<HostPartial> hosts = four_hosts();
  for (const HostPartial& h : hosts) spill->put(spill->add_slot(), h);
  EXPECT_EQ(spill->bytes(), 0u);
  PartialSet set;
  set.add_stored(spill, spill->filled_slots());
  EXPECT_EQ(render_summary(summary_from_partials(set), OutputFormat::kJson),
            render_summary(summary_from_partials(PartialSet(hosts)), OutputFormat::kJson));
}

TEST(PartialSpill, AFileThatTakesNoMoreLeavesTheRestInMemory) {
  // A file size limit stands for a full disk: the writes past it fail (EFBIG), as on ENOSPC.
  const std::vector<HostPartial> hosts = four_hosts();
  auto spill = std::make_shared<PartialSpill>();
  rlimit before{};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &before), 0);
  auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  // Room for the first host and part of the second.
  const size_t room = write_partial_file({&hosts[0]}).size() + 1000;
  rlimit small = before;
  small.rlim_cur = room;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  for (const HostPartial& h : hosts) spill->put(spill->add_slot(), h);
  setrlimit(RLIMIT_FSIZE, &before);
  std::signal(SIGXFSZ, old_handler);
  EXPECT_GT(spill->bytes(), 0u);
  EXPECT_LE(spill->bytes(), room);
  PartialSet set;
  set.add_stored(spill, spill->filled_slots());
  EXPECT_EQ(render_summary(summary_from_partials(set), OutputFormat::kJson),
            render_summary(summary_from_partials(PartialSet(hosts)), OutputFormat::kJson));
}

TEST(PartialSpill, WhatNoFileHoldsComesBack) {
  std::vector<HostPartial> hosts = four_hosts();
  hosts[0].partial_file = "b.partial";
  hosts[0].op_capped = true;
  auto spill = std::make_shared<PartialSpill>();
  const size_t slot = spill->add_slot();
  spill->put(slot, hosts[0]);
  spill->add_warning(slot, "said of this host later");
  EXPECT_GT(spill->bytes(), 0u);
  const HostPartial back = spill->load(slot);
  EXPECT_EQ(back.partial_file, "b.partial");
  EXPECT_TRUE(back.op_capped);
  EXPECT_EQ(back.path, hosts[0].path);
  ASSERT_FALSE(back.warnings.empty());
  EXPECT_EQ(back.warnings.back(), "said of this host later");
  EXPECT_EQ(spill->head(slot).warnings, back.warnings);
  EXPECT_TRUE(spill->head(slot).devices.front().op_groups.empty());  // a head holds no lists
  EXPECT_FALSE(back.devices.front().op_groups.empty());
}

TEST(PartialSpill, HostsOfAPartialFileStayWhereTheyAre) {
  // A merged partial file on disk: its hosts are decoded from the file's mapped bytes, not
  // copied into the spill, and give what the same hosts held in memory give.
  const std::vector<HostPartial> hosts = four_hosts();
  const fs::path path = fs::path(::testing::TempDir()) / "in_place_four.partial";
  std::vector<const HostPartial*> all;
  for (const HostPartial& h : hosts) all.push_back(&h);
  save_partial_file(path.string(), write_partial_file(all));
  auto spill = std::make_shared<PartialSpill>();
  std::shared_ptr<Buffer> file = Buffer::open(path.string());
  read_partial_file_each(file->view(), path.string(),
                         [&](HostPartial&& h, std::string_view message) {
                           spill->put_in_place(spill->add_slot(), h, file, message);
                         });
  EXPECT_EQ(spill->bytes(), 0u);  // nothing written to the temporary file
  const HostPartial back = spill->load(2);
  EXPECT_EQ(back.host, "c");
  EXPECT_EQ(back.partial_file, path.string());
  EXPECT_FALSE(back.devices.front().op_groups.empty());
  PartialSet set;
  set.add_stored(spill, spill->filled_slots());
  const auto json = OutputFormat::kJson;
  EXPECT_EQ(
      render_summary(summary_from_partials(set), json),
      render_summary(summary_from_partials(PartialSet(read_partial_path(path.string()))), json));
  EXPECT_FALSE(set.decoded_all());
  fs::remove(path);
}

TEST(PartialSpill, AHostIsDecodedForTheListsAsked) {
  const std::vector<HostPartial> hosts = four_hosts();
  auto spill = std::make_shared<PartialSpill>();
  const size_t slot = spill->add_slot();
  spill->put(slot, hosts[0]);
  const HostPartial whole = spill->load(slot);
  ASSERT_FALSE(whole.devices.front().op_groups.empty());
  ASSERT_FALSE(whole.devices.front().executions.empty());
  ASSERT_FALSE(whole.compile.records.empty());
  const HostPartial ops = spill->load(slot, kPartOps);
  ASSERT_EQ(ops.devices.size(), whole.devices.size());
  EXPECT_EQ(ops.devices.front().op_groups.size(), whole.devices.front().op_groups.size());
  EXPECT_EQ(ops.devices.front().op_busy_ps, whole.devices.front().op_busy_ps);  // scalars stay
  EXPECT_TRUE(ops.devices.front().executions.empty());
  EXPECT_TRUE(ops.compile.records.empty());
  EXPECT_EQ(ops.parts, whole.parts);  // what the file holds, not what was decoded
  const HostPartial compile = spill->load(slot, kPartCompileTotals);
  EXPECT_EQ(compile.compile.records.size(), whole.compile.records.size());
  EXPECT_TRUE(compile.devices.front().op_groups.empty());
}

TEST(PartialSpill, HostFilesAreReadIntoTheStore) {
  // Three hosts: the same file under three names (named one by one: one machine wrote them).
  const fs::path root = fs::path(::testing::TempDir()) / "spill_three_hosts";
  const fs::path dir = root / "plugins" / "profile" / "run";
  fs::remove_all(root);
  fs::create_directories(dir);
  const std::string file = test_data("jax_cpu_8dev/plugins/profile/session/vm.xplane.pb");
  for (const char* host : {"h0", "h1", "h2"})
    fs::create_symlink(fs::absolute(file), dir / (std::string(host) + ".xplane.pb"));
  PartialLoadOptions o;
  o.extract.parts = summary_parts();
  LoadedPartials loaded;
  load_partials({(dir / "h0.xplane.pb").string(), (dir / "h1.xplane.pb").string(),
                 (dir / "h2.xplane.pb").string()},
                o, loaded);
  ASSERT_EQ(loaded.set.size(), 3u);
  const SummaryResult r = summary_from_partials(loaded.set);
  EXPECT_EQ(r.hosts, (std::vector<std::string>{"h0", "h1", "h2"}));
  EXPECT_GT(r.device.busy_ps, 0);
  EXPECT_FALSE(loaded.set.decoded_all());
  // The warning that they may not be one capture's is said once, with the first host read.
  ASSERT_FALSE(loaded.set.heads().front().warnings.empty());
  EXPECT_NE(loaded.set.heads().front().warnings.back().find("may not be hosts of one capture"),
            std::string::npos);
}

TEST(PartialSpill, PartialFilesAreReadHostByHost) {
  const std::vector<HostPartial> hosts = four_hosts();
  const fs::path dir = fs::path(::testing::TempDir()) / "spill_partial_files";
  fs::remove_all(dir);
  fs::create_directories(dir);
  // One file of three hosts, and one of the fourth cut short.
  const std::string three = (dir / "abc.partial").string();
  save_partial_file(three, write_partial_file({&hosts[0], &hosts[1], &hosts[2]}));
  const std::string cut = (dir / "d.partial").string();
  const std::string d = write_partial_file({&hosts[3]});
  save_partial_file(cut, d.substr(0, d.size() / 2));
  PartialLoadOptions o;
  LoadedPartials loaded;
  load_partials({three}, o, loaded);
  EXPECT_EQ(loaded.hosts_read, 3u);
  EXPECT_EQ(render_summary(summary_from_partials(loaded.set), OutputFormat::kJson),
            render_summary(summary_from_partials(PartialSet({hosts[0], hosts[1], hosts[2]})),
                           OutputFormat::kJson));
  // Written again host by host from the store: the bytes of the hosts written together.
  const std::string streamed = write_partial_file(loaded.set);
  EXPECT_FALSE(loaded.set.decoded_all());
  std::vector<const HostPartial*> all;
  for (const HostPartial& h : loaded.set.hosts()) all.push_back(&h);
  EXPECT_TRUE(streamed == write_partial_file(all));
  // The damaged file stops the read, or with keep_going is skipped whole.
  EXPECT_THROW(load_partials({three, cut}, o, loaded), InputError);
  o.keep_going = true;
  LoadedPartials kept;
  load_partials({three, cut}, o, kept);
  EXPECT_EQ(kept.hosts_read, 3u);
  ASSERT_EQ(kept.skipped.size(), 1u);
  EXPECT_EQ(kept.skipped.front().path, cut);
  EXPECT_EQ(kept.set.size(), 3u);
}

}  // namespace
}  // namespace jaxprof
