// The partial file: one or more hosts' partial summaries (model/partial/partial.h) as one protobuf
// message, jaxprof.partial.PartialFile in partial.proto next to this file (docs/multihost.md
// says why protobuf). Concatenating two files' hosts is a merge: a file may hold any set of
// hosts.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "jaxprof/model/partial/partial.h"

namespace jaxprof {

inline constexpr std::string_view kPartialMagic = "jaxprof-partial";

// "x.partial" or "x.partial.gz".
bool is_partial_file_name(std::string_view name);
// Whether the bytes begin as a partial file does.
bool looks_like_partial(std::string_view bytes);

std::string write_partial_file(const std::vector<const HostPartial*>& hosts);
// Every host of the set, in order, one decoded at a time (PartialSet::for_each_host).
std::string write_partial_file(const PartialSet& set);
// Throws InputError naming `path` for anything that is not a valid partial file of a version
// this reader knows; a file cut short says so (`decompressed`: the bytes are a .gz file's).
std::vector<HostPartial> read_partial_file(std::string_view bytes, const std::string& path,
                                           bool decompressed = false);
// The same, giving each host to `fn` as soon as it is read: a file of many hosts is never
// decoded whole. A fault throws after the hosts before it were given.
void read_partial_file_each(std::string_view bytes, const std::string& path,
                            const std::function<void(HostPartial&&)>& fn,
                            bool decompressed = false);
// The same, giving with each host its message: the bytes of `bytes` it was read from, which
// read_partial_host reads again (a merged file's hosts are kept where they are, not copied).
void read_partial_file_each(std::string_view bytes, const std::string& path,
                            const std::function<void(HostPartial&&, std::string_view)>& fn,
                            bool decompressed = false);
// The host whose message is `host`, a part of the partial file `file` that
// read_partial_file_each gave; throws InputError naming `path` as that did.
// `parts`: the lists to decode (partial_io::read_host).
HostPartial read_partial_host(std::string_view file, std::string_view host, const std::string& path,
                              uint32_t parts = kPartAll);
// Reads a file from disk (gzip or plain).
std::vector<HostPartial> read_partial_path(const std::string& path);
void read_partial_path_each(const std::string& path, const std::function<void(HostPartial&&)>& fn);
// Writes `bytes` to `path` (gzip when the name ends in .gz); throws InputError when it cannot.
void save_partial_file(const std::string& path, const std::string& bytes);

}  // namespace jaxprof
