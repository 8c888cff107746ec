// `jaxprof hosts` as a table, JSON or CSV.
#pragma once

#include <string>

#include "jaxprof/analysis/hosts/hosts.h"
#include "jaxprof/render/text/text.h"

namespace jaxprof {

// `top`: rows in the table (0 = all); JSON and CSV hold every host.
std::string render_hosts(const HostsResult& result, OutputFormat format, size_t top = 0);

}  // namespace jaxprof
