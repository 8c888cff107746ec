// XSpace (`*.xplane.pb`, what jax.profiler writes) importer.
#pragma once

#include <memory>
#include <string>

#include "jaxprof/io/buffer.h"
#include "jaxprof/model/profile.h"

namespace jaxprof {

struct ImportOptions {
  // Worker threads for decoding events; 0 = one per hardware thread.
  unsigned threads = 0;
  // Drop file pages from the resident set once decoded (see Buffer::release).
  bool release_pages = true;
};

// Decodes one XSpace into `profile`, tagging every plane with host `host`. Event times are made
// relative to the profile's base (call rebase_profile after the last import). Throws InputError
// naming the file for anything malformed.
void import_xspace(Profile& profile, std::shared_ptr<Buffer> buffer, const std::string& host,
                   const ImportOptions& options = {});

// Makes all event times relative to the earliest line timestamp over all imported files and
// resolves module names from the HLO index. Idempotent.
void finish_import(Profile& profile);

// Adds every HloProto carried by the `/host:metadata` planes to the profile's HLO index.
void index_hlo_from_metadata(Profile& profile);

}  // namespace jaxprof
