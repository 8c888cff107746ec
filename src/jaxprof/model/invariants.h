// What the model promises every analysis, checked where importers hand their data over: the
// profile's structure once the import is finished (finish_import), and each line's events when
// its importer has decoded them (Profile::require_lines). Every index names an entry that exists
// (an event's metadata belongs to its own line's plane, a line's events lie inside the event
// columns, a metadata entry's plane exists), and every time lies within the model's range
// (model/time_range.h). Only a damaged or hostile input can lead an importer to break a promise,
// so a broken one is an InputError naming the file, never something an analysis meets.
#pragma once

#include <cstdint>
#include <span>

#include "jaxprof/model/profile.h"

namespace jaxprof {

// Planes, lines, metadata, modules and hosts. Throws InputError, also for a profile with no
// planes at all (no events to analyse).
void check_profile_structure(const Profile& profile);

// The events of `lines` (decoded).
void check_line_events(const Profile& profile, std::span<const uint32_t> lines);

// Events an importer picked out of `line` without decoding it (Profile::scan_line).
void check_scanned_events(const Profile& profile, uint32_t line,
                          std::span<const ScannedEvent> events);

}  // namespace jaxprof
