#pragma once

#include <string>

#include "jaxprof/analysis/summary/info.h"
#include "jaxprof/render/text/text.h"

namespace jaxprof {

// `all_lines`: list every line (tables otherwise summarise host planes with many threads).
std::string render_info(const ProfileInfo& info, OutputFormat format, bool all_lines);

}  // namespace jaxprof
