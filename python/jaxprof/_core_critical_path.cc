// Profile.critical_path (_profile.py): the critical path of each step and its what-if replays,
// on the loaded profile.
#include <string>
#include <tuple>
#include <vector>

#include "_core.h"
#include "jaxprof/analysis/critical_path/critical_path.h"
#include "jaxprof/render/text/critical_path_render.h"

namespace jaxprof::python {
namespace {

using namespace nb::literals;

// `jaxprof critical-path --format json` and its table (`shown` rows).
std::tuple<std::string, std::string> critical_path(PyProfile& self,
                                                   const std::vector<std::string>& what_ifs,
                                                   size_t top, bool rank, size_t shown) {
  CriticalPathOptions o;
  for (const std::string& s : what_ifs) o.what_ifs.push_back(parse_what_if(s));
  o.top_ops = top;
  o.rank = rank;
  nb::gil_scoped_release release;
  std::lock_guard lock(self.mu);
  const CriticalPathResult r = compute_critical_path(self.profile(), o);
  return {render_critical_path(r, OutputFormat::kJson, 0),
          render_critical_path(r, OutputFormat::kTable, shown)};
}

}  // namespace

void bind_critical_path(nb::module_&) {
  profile_class().def("critical_path", &critical_path, "what_ifs"_a, "top"_a, "rank"_a, "shown"_a);
}

}  // namespace jaxprof::python
