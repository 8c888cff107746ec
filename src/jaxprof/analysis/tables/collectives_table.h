// collectives: one row per collective instance (one execution of a collective op on every
// device of its group, as `collectives --instances` matches them) and device, with the op's
// size and group and the instance's wait for the last device to arrive.
#pragma once

#include "jaxprof/analysis/tables/table.h"
#include "jaxprof/model/profile.h"

namespace jaxprof {

RecordTable collectives_table(const Profile& profile);

}  // namespace jaxprof
