#include "jaxprof/analysis/tables/collectives_table.h"

#include <map>

#include "jaxprof/analysis/collectives/collectives.h"

namespace jaxprof {

RecordTable collectives_table(const Profile& p) {
  CollectivesOptions o;
  o.instances = true;
  o.members = true;
  const CollectivesResult r = compute_collectives(p, o);
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
      // Each member names its device (and the device its host).
      const CollectiveDevice& d = r.devices[m.device];
      hosts.push(d.host);
      devs.push(d.device);
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
