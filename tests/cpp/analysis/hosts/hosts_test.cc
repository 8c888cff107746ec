// `jaxprof hosts` on hand-made partials: which host held a collective up is judged on the clock
// `collectives` and `ops` report durations on (the device's own, where events carry it).
#include "jaxprof/analysis/hosts/hosts.h"

#include <gtest/gtest.h>

#include "jaxprof/model/partial/partial.h"

namespace jaxprof {
namespace {

// One host, one TPU device, one execution of one all-reduce: its span on the timeline and its
// duration on the device clock.
HostPartial host_with_all_reduce(const std::string& name, int64_t begin_ps, int64_t end_ps,
                                 int64_t device_duration_ps) {
  HostPartial h;
  h.host = name;
  h.path = name + ".partial";
  h.tpu = true;
  h.parts = kPartTimeline | kPartExecutions | kPartSteps | kPartCollectives;
  h.steady.known = true;
  const uint32_t module = h.module_id("jit_step", 7);
  PartialDevice& d = h.devices.emplace_back();
  d.name = "/device:TPU:0";
  d.timeline.span_ps = end_ps;
  PartialCollectiveOp& op = d.collective_ops.emplace_back();
  op.module = module;
  op.name = h.strings.id("all-reduce.1");
  op.opcode = h.strings.id("all-reduce");
  op.message_bytes = 1 << 20;
  op.group_size = 2;
  op.groups = 1;
  op.device_group = 0;
  d.collective_executions.push_back(
      {0, begin_ps, end_ps, end_ps - begin_ps, device_duration_ps, 1});
  return h;
}

TEST(Hosts, WhoArrivedLastIsJudgedOnTheDeviceClock) {
  // On the timeline both hosts spent 10 us in the all-reduce, which would name no one; the
  // device clocks say host a spent 3 us (it arrived last) and host b 8 us (it waited 5 us).
  std::vector<HostPartial> hosts;
  hosts.push_back(host_with_all_reduce("a", 0, 10'000'000, 3'000'000));
  hosts.push_back(host_with_all_reduce("b", 0, 10'000'000, 8'000'000));
  const HostsResult r = hosts_from_partials(PartialSet(std::move(hosts)));
  ASSERT_EQ(r.instances, 1u);
  const HostRow* a = nullptr;
  const HostRow* b = nullptr;
  for (const HostRow& row : r.hosts) (row.host == "a" ? a : b) = &row;
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->arrived_last, 1u);
  EXPECT_EQ(a->wait_caused_ps, 5'000'000);
  EXPECT_EQ(b->arrived_last, 0u);
  EXPECT_EQ(b->waited_ps, 5'000'000);
  EXPECT_EQ(a->rank, 1u);
}

}  // namespace
}  // namespace jaxprof
