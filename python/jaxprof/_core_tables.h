// The tables of a profile (analysis/tables) for Python: bound apart from _core.cc, which hands
// over how to reach a Profile object's model and lock.
#pragma once

#include <nanobind/nanobind.h>

#include <functional>
#include <mutex>

#include "jaxprof/model/profile.h"

namespace jaxprof {

struct ProfileAccess {
  const Profile* profile = nullptr;
  std::mutex* mu = nullptr;  // held while building: lines decode lazily
};
using ProfileAccessor = std::function<ProfileAccess(nanobind::handle)>;

void bind_tables(nanobind::module_& m, ProfileAccessor access);

}  // namespace jaxprof
