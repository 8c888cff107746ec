#pragma once

#include <string>

#include "jaxprof/analysis/steps/modules.h"
#include "jaxprof/render/text/text.h"

namespace jaxprof {

std::string render_modules(const ModulesResult& result, OutputFormat format);

}  // namespace jaxprof
