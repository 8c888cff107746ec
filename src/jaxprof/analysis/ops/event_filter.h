// Event selection shared by every analysis: name prefix, RE2 regex, minimum duration, device.
#pragma once

#include <re2/re2.h>

#include "jaxprof/model/event_filter_spec.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace jaxprof {


class EventFilter {
 public:
  // Throws InputError (file "") for an invalid regex, naming the option.
  explicit EventFilter(const EventFilterSpec& spec);

  bool keeps_device(std::string_view plane_name) const;
  bool keeps_name(std::string_view display_name) const {
    if (!spec_.prefix.empty() && !display_name.starts_with(spec_.prefix)) return false;
    if (match_ && !RE2::PartialMatch(display_name, *match_)) return false;
    return true;
  }
  bool keeps(std::string_view display_name, int64_t duration_ps) const {
    return duration_ps >= spec_.min_duration_ps && keeps_name(display_name);
  }
  const EventFilterSpec& spec() const { return spec_; }
  bool filters_names() const { return !spec_.prefix.empty() || match_ != nullptr; }

 private:
  EventFilterSpec spec_;
  std::unique_ptr<RE2> match_;
  std::unique_ptr<RE2> device_re_;
};

}  // namespace jaxprof
