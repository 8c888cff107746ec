// What the binding's files share (_core.cc holds the module; each _core_*.cc binds one area): the
// Python Profile object and the functions that bind each area.
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include <mutex>

#include "jaxprof/formats/load.h"
#include "jaxprof/model/execution_role.h"

namespace jaxprof::python {

namespace nb = nanobind;

struct PyProfile {
  LoadedProfile loaded;
  // Lines decode lazily (the Profile fills a cache behind const methods): one decoder at a time,
  // since calls run with the GIL released.
  std::mutex mu;
  // What the analyses count besides the steady state (set by load()).
  SteadyStateOptions steady;
  const Profile& profile() const { return loaded.profile; }
};

// The Profile class bind_profile made, for the other areas to add their methods to.
inline nb::class_<PyProfile> profile_class() {
  return nb::borrow<nb::class_<PyProfile>>(nb::type<PyProfile>());
}

// _core_profile.cc: loading, and the Profile's planes, lines and event columns.
void bind_profile(nb::module_& m);
// _core_analyses.cc: the analyses of a Profile, as the CLI's JSON or tables.
void bind_analyses(nb::module_& m);
// _core_autotune.cc: the autotuning report, labels and the SQLite cache.
void bind_autotune(nb::module_& m);
// _core_partials.cc: partial summaries of many hosts (jaxprof.distributed, jaxprof-dask).
void bind_partials(nb::module_& m);
// _core_critical_path.cc: the critical path of each step and its what-if replays.
void bind_critical_path(nb::module_& m);
// _core_sessions.cc: the sessions of a log directory (jaxprof.sessions).
void bind_sessions(nb::module_& m);

}  // namespace jaxprof::python
