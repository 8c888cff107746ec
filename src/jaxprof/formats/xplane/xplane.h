// XSpace (`*.xplane.pb`, what jax.profiler writes) importer.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "jaxprof/io/buffer.h"
#include "jaxprof/io/discover.h"
#include "jaxprof/model/profile.h"

namespace jaxprof {

struct ImportOptions {
  // Worker threads for decoding events; 0 = one per hardware thread.
  unsigned threads = 0;
  // Drop file pages from the resident set once decoded (see Buffer::release).
  bool release_pages = true;
  // With release_pages, also drop every page once the lines are counted, and a scanned line's
  // pages as it is scanned: the resident set then peaks near the larger of the file and the
  // columns decoded later rather than their sum, but each line read again (decoded, or scanned
  // as the host launch index and compile totals scan the host threads) faults its pages back in
  // from the page cache. `jaxprof ops` and `summary`: 1.32x -> 1.09x the file on the 80 MB
  // scaled MI300X profile; on the TPU one ops 1.57x -> 1.09x, summary 1.99x -> 1.42x; the same
  // CPU time within the noise.
  bool release_counted = false;
};

// Reads one XSpace into `profile`, tagging every plane with host `host`: planes, metadata and
// lines with their event counts now; each line's events when Profile::require_lines asks (after
// finish_import). Throws InputError naming the file for anything malformed.
void import_xspace(Profile& profile, std::shared_ptr<Buffer> buffer, const std::string& host,
                   const ImportOptions& options = {});

// Reads several XSpace files into `profile`, one host each, in the order given: opened,
// decompressed and scanned on several threads (ImportOptions::threads), then added one after the
// other, so the profile is the one import_xspace gives file by file. Throws the InputError of the
// first file (in that order) that fails.
void import_xspace_files(Profile& profile, const std::vector<HostFile>& files,
                         const ImportOptions& options = {});

// Fixes the profile's time zero (the earliest line timestamp over all imported files) once every
// file and HLO proto is in. Lines can be decoded after this. Idempotent.
void finish_import(Profile& profile);

// Adds every HloProto carried by the `/host:metadata` planes to the profile's HLO index.
void index_hlo_from_metadata(Profile& profile);

}  // namespace jaxprof
