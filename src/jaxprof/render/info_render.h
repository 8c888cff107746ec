#pragma once

#include <string>

#include "jaxprof/analysis/info.h"
#include "jaxprof/render/text.h"

namespace jaxprof {

// `all_lines`: list every line (tables otherwise summarise host planes with many threads).
std::string render_info(const ProfileInfo& info, OutputFormat format, bool all_lines);

}  // namespace jaxprof
