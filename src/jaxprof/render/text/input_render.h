// What a command read: the session and the host files behind the path it was given. Commands say
// it on stderr when they print tables and in the JSON always (its "input" member), so that a
// number is never separated from the capture it describes.
#pragma once

#include <string>

#include "jaxprof/io/discover.h"

namespace jaxprof {

// One line: "read session S (newest of 2 in DIR; --session picks another): host a (a.xplane.pb)".
std::string render_input_line(const ProfileFiles& files);
// {"path": ..., "layout": "file|run-dir|log-dir", "session": ..., "session_dir": ..., "sessions":
// [...],
//  "newest_by_default": bool, "hosts": [{"host": ..., "path": ...}], "hlo_files": [...]}
std::string render_input_json(const ProfileFiles& files);

}  // namespace jaxprof
