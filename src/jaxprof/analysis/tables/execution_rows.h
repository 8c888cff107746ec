// The numbering the tables share: module executions are numbered over all devices (op_devices()
// order, each device's executions by start), the row of each in module_executions, and device
// op rows name theirs by that number; steps are looked up per host by time.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "jaxprof/analysis/steps/steps.h"
#include "jaxprof/model/profile.h"

namespace jaxprof {

struct ExecutionRows {
  // Per event in [first_event, first_event + of_event.size()): its execution's number, -1 for
  // none. Only the span of the executions' events: a profile's host events may be millions more.
  uint32_t first_event = 0;
  std::vector<int32_t> of_event;
  std::vector<uint32_t> first;  // per device: the number of its first execution

  // The number of event e's execution; -1 for none.
  int32_t of(uint32_t e) const {
    return e >= first_event && e - first_event < of_event.size() ? of_event[e - first_event] : -1;
  }
};
// Computed once per profile (Profile::memo).
const ExecutionRows& execution_rows(const Profile& profile);

// compute_steps, once per profile.
const StepsResult& table_steps(const Profile& profile);

// The step (its number) that holds a time on one host: the latest step of the host starting at
// or before it, when it has not ended yet.
class StepLookup {
 public:
  explicit StepLookup(const StepsResult& steps);
  std::optional<int64_t> at(uint32_t host, int64_t t_ps) const;

 private:
  std::vector<std::vector<const Step*>> by_host_;
};

}  // namespace jaxprof
