#include "jaxprof/analysis/tables/collectives_table.h"

#include <algorithm>
#include <map>
#include <optional>
#include <tuple>
#include <unordered_set>

#include "jaxprof/analysis/collectives/collectives.h"
#include "jaxprof/analysis/ops/device_events.h"

namespace jaxprof {
namespace {

// The devices whose op event of a collective starts at a time on a host: instances list their
// executions by host and time, and this names the device of each.
using Arrivals = std::map<std::tuple<uint32_t, int64_t, std::string_view>, std::vector<uint32_t>>;

Arrivals collective_arrivals(const Profile& p, const std::vector<DeviceLines>& devices,
                             const std::unordered_set<std::string_view>& names) {
  Arrivals out;
  const Events& ev = p.events;
  for (uint32_t di = 0; di < devices.size(); ++di) {
    const DeviceLines& dev = devices[di];
    const uint32_t host = p.planes[dev.plane].host;
    for (uint32_t li : dev.lines) {
      const Line& line = p.lines[li];
      for (uint32_t e = line.first_event; e < line.first_event + line.event_count; ++e) {
        if (ev.hlo_op[e] == 0 || !dev.counts(ev, e)) continue;
        std::string_view op = p.str(ev.hlo_op[e]);
        if (!names.count(op)) continue;
        std::vector<uint32_t>& at = out[{host, ev.start_ps[e], op}];
        if (at.empty() || at.back() != di) at.push_back(di);
      }
    }
  }
  return out;
}

}  // namespace

RecordTable collectives_table(const Profile& p) {
  CollectivesOptions o;
  o.instances = true;
  o.members = true;
  const CollectivesResult r = compute_collectives(p, o);
  const std::vector<DeviceLines> devices = op_devices(p);
  std::unordered_set<std::string_view> names;
  for (const CollectiveOp& op : r.ops) names.insert(op.name);
  const Arrivals arrivals = collective_arrivals(p, devices, names);
  std::map<std::pair<std::string_view, std::string_view>, const CollectiveOp*> ops;
  for (const CollectiveOp& op : r.ops) ops.try_emplace({op.module, op.name}, &op);

  RecordTable t;
  t.name = "collectives";
  RecordColumn& instance = t.add("instance", TableType::kInt64, "", "the instance's number");
  RecordColumn& module = t.add("module", TableType::kString, "", "the XLA module");
  RecordColumn& name = t.add("name", TableType::kString, "", "the HLO op (the -start op if async)");
  RecordColumn& opcode = t.add("opcode", TableType::kString, "", "all-reduce, all-gather, ...");
  RecordColumn& group = t.add("group_size", TableType::kInt64, "", "devices in its replica group");
  RecordColumn& bytes = t.add("message_bytes", TableType::kUInt64, "bytes", "its operands' size");
  RecordColumn& run = t.add("run_id", TableType::kInt64, "", "the run id; null when none");
  RecordColumn& index = t.add("index", TableType::kInt64, "",
                             "the execution's index on each device (within its run id)");
  RecordColumn& ndev = t.add("devices", TableType::kInt64, "", "devices that ran the instance");
  RecordColumn& host = t.add("host", TableType::kString, "", "the host of this row's device");
  RecordColumn& device = t.add("device", TableType::kString, "", "this row's device");
  RecordColumn& start = t.add("start_ps", TableType::kInt64, "ps", "its start on this device");
  RecordColumn& end = t.add("end_ps", TableType::kInt64, "ps", "its end on this device");
  RecordColumn& dur = t.add("duration_ps", TableType::kInt64, "ps", "duration (op clock)");
  RecordColumn& arrival =
      t.add("arrival_ps", TableType::kInt64, "ps", "start_ps less the instance's first start");
  RecordColumn& wait = t.add("wait_ps", TableType::kInt64, "ps",
                            "the instance's wait: last end - first start - fastest duration");
  RecordColumn& late = t.add("late_device", TableType::kString, "", "the device that started last");
  StringCodes modules(module), names_c(name), opcodes(opcode), hosts(host), devs(device),
      lates(late);
  int64_t number = 0;
  for (const CollectiveInstance& in : r.instances) {
    auto op = ops.find({in.module, in.name});
    std::vector<uint32_t> used;
    for (const CollectiveInstance::Member& m : in.members) {
      instance.push(number);
      modules.push(in.module, !in.module.empty());
      names_c.push(in.name);
      const bool known = op != ops.end();
      opcodes.push(known ? std::string_view(op->second->opcode) : "", known);
      if (known && op->second->group_size > 0)
        group.push(op->second->group_size);
      else
        group.push_null();
      if (known && op->second->message_bytes > 0)
        bytes.push_u(op->second->message_bytes);
      else
        bytes.push_null();
      if (in.has_run_id)
        run.push(in.run_id);
      else
        run.push_null();
      index.push(static_cast<int64_t>(in.index));
      ndev.push(in.devices);
      hosts.push(m.host < p.hosts.size() ? std::string_view(p.hosts[m.host].name) : "",
                 m.host < p.hosts.size());
      // The first device of this host starting the op then that this instance has not named yet.
      std::optional<uint32_t> dev;
      if (auto a = arrivals.find({m.host, m.begin_ps, std::string_view(in.name)});
          a != arrivals.end())
        for (uint32_t d : a->second)
          if (std::find(used.begin(), used.end(), d) == used.end()) {
            dev = d;
            used.push_back(d);
            break;
          }
      devs.push(dev ? std::string_view(devices[*dev].name) : "", dev.has_value());
      start.push(m.begin_ps);
      end.push(m.end_ps);
      dur.push(m.duration_ps);
      arrival.push(m.begin_ps - in.first_start_ps);
      wait.push(in.wait_ps);
      lates.push(in.late_device, !in.late_device.empty());
      ++t.rows;
    }
    ++number;
  }
  t.finish();
  return t;
}

}  // namespace jaxprof
