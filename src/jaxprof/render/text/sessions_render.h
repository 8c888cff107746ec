// `jaxprof sessions LOGDIR`: the sessions of a log directory, newest first, with their hosts and
// every file's size and modification time (io/session_list.h).
#pragma once

#include <string>
#include <vector>

#include "jaxprof/io/session_list.h"
#include "jaxprof/render/text/text.h"

namespace jaxprof {

// "2026-11-26 18:45:46", the local time (as `ls -l` and XAX's view_profile show it).
std::string local_time_text(double seconds_since_epoch);

std::string render_sessions(const std::vector<SessionInfo>& sessions, const std::string& log_dir,
                            OutputFormat format);

}  // namespace jaxprof
