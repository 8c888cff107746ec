// `jaxprof report` from partial summaries (docs/multihost.md): every section a partial holds the
// figures of, equal to the report of the same hosts' profiles; the roofline and memory sections,
// whose figures need the events and the HLO, say so instead.
#pragma once

#include <cstdint>

#include "jaxprof/analysis/partial/extract_partials.h"
#include "jaxprof/model/partial/partial.h"
#include "jaxprof/render/html/html_report_data.h"

namespace jaxprof {

// What to extract from profiles read with partials (and what partial files must hold).
PartialExtractOptions html_report_extract(const SteadyStateOptions& steady);

// Throws InputError naming a host whose partial lacks a part the report needs, or was written
// with other steady-state options.
HtmlReportData html_report_data_from_partials(const PartialSet& set,
                                              const SteadyStateOptions& steady);

}  // namespace jaxprof
