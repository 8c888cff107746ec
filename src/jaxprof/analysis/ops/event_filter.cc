#include "jaxprof/analysis/ops/event_filter.h"

#include "jaxprof/common/error.h"

namespace jaxprof {

namespace {

std::unique_ptr<RE2> compile(const std::string& pattern, const char* option) {
  RE2::Options opts;
  opts.set_log_errors(false);
  auto re = std::make_unique<RE2>(pattern, opts);
  if (!re->ok())
    throw InputError("", std::string("invalid regular expression for ") + option + " '" + pattern +
                             "': " + re->error());
  return re;
}

}  // namespace

EventFilter::EventFilter(const EventFilterSpec& spec) : spec_(spec) {
  if (!spec_.match.empty()) match_ = compile(spec_.match, spec_.names.match.c_str());
  if (spec_.device.starts_with("re:"))
    device_re_ = compile(spec_.device.substr(3), spec_.names.device.c_str());
  if (spec_.min_duration_ps < 0)
    throw InputError("", spec_.names.min_duration + " must not be negative");
}

bool EventFilter::keeps_device(std::string_view plane_name) const {
  if (spec_.device.empty()) return true;
  if (device_re_) return RE2::PartialMatch(plane_name, *device_re_);
  return plane_name.find(spec_.device) != std::string_view::npos;
}

}  // namespace jaxprof
