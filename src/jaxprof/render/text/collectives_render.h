#pragma once

#include <string>

#include "jaxprof/analysis/collectives/collectives.h"
#include "jaxprof/render/text/text.h"

namespace jaxprof {

std::string render_collectives(const CollectivesResult& result, OutputFormat format);

}  // namespace jaxprof
