// The Python binding: a thin layer over the C++ core. Profiles load and analyse in C++ with the
// GIL released; event columns are handed to NumPy as read-only views that keep the Profile alive;
// analysis results cross as the CLI's JSON (docs/json.md), so Python and the CLI agree exactly.
// Each area is bound in a file of its own (_core.h).
#include "_core.h"

#include <exception>
#include <string>

#include "jaxprof/common/error.h"
#include "jaxprof/render/text/text.h"

#include "_core_nsys_jax.h"
#include "_core_tables.h"

namespace jaxprof::python {
namespace {

// InputError becomes a jaxprof.ProfileError subclass, built in Python (jaxprof/errors.py) so that
// the hierarchy lives in one readable place.
void translate(const std::exception_ptr& p, void*) {
  try {
    std::rethrow_exception(p);
  } catch (const InputError& e) {
    try {
      nb::object make = nb::module_::import_("jaxprof.errors").attr("_from_core");
      nb::object exc = make(e.file(), e.reason(), e.offset(), std::string(e.what()));
      PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exc.ptr())), exc.ptr());
    } catch (nb::python_error& pe) {
      pe.restore();
    }
  }
}

}  // namespace
}  // namespace jaxprof::python

NB_MODULE(_core, m) {
  using namespace jaxprof::python;
  m.doc() = "jaxprof C++ core (use the jaxprof package, not this module)";
  nb::register_exception_translator(translate);
  // The tables and nsys-jax's HLO lookups reach a Profile object's model through this.
  auto access = [](nb::handle h) {
    auto& s = nb::cast<PyProfile&>(h);
    return jaxprof::ProfileAccess{&s.profile(), &s.mu};
  };
  jaxprof::bind_tables(m, access);
  jaxprof::bind_nsys_jax(m, access);
  // Tables printed from Python say how to see all rows in Python terms (top=0, .rows).
  jaxprof::set_table_layout({.wide = false, .line_width = 0, .python = true});
  bind_profile(m);
  bind_analyses(m);
  bind_autotune(m);
  bind_partials(m);
  bind_critical_path(m);
  bind_sessions(m);
}
