// The partial file: one or more hosts' partial summaries (analysis/partial.h) as one protobuf
// message, jaxprof.partial.PartialFile in partial.proto next to this file (docs/multihost.md
// says why protobuf). Concatenating two files' hosts is a merge: a file may hold any set of
// hosts.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "jaxprof/analysis/partial.h"

namespace jaxprof {

inline constexpr std::string_view kPartialMagic = "jaxprof-partial";

// "x.partial" or "x.partial.gz".
bool is_partial_file_name(std::string_view name);
// Whether the bytes begin as a partial file does.
bool looks_like_partial(std::string_view bytes);

std::string write_partial_file(const std::vector<const HostPartial*>& hosts);
// Throws InputError naming `path` for anything that is not a valid partial file of a version
// this reader knows.
std::vector<HostPartial> read_partial_file(std::string_view bytes, const std::string& path);
// Reads a file from disk (gzip or plain).
std::vector<HostPartial> read_partial_path(const std::string& path);
// Writes `bytes` to `path` (gzip when the name ends in .gz); throws InputError when it cannot.
void save_partial_file(const std::string& path, const std::string& bytes);

}  // namespace jaxprof
