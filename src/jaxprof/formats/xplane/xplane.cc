// The XSpace importer's entry points: one file, several hosts' files at once, and what follows
// once every file is in. The importer itself is XSpaceImporter (xspace_importer.h).
#include "jaxprof/formats/xplane/xplane.h"

#include <algorithm>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "jaxprof/common/error.h"
#include "jaxprof/formats/xplane/xspace_importer.h"
#include "jaxprof/formats/xplane/xspace_parallel.h"
#include "jaxprof/model/invariants.h"

namespace jaxprof {

using xspace_import::naming_file;
using xspace_import::XSpaceImporter;

void import_xspace(Profile& profile, std::shared_ptr<Buffer> buffer, const std::string& host,
                   const ImportOptions& options) {
  const Buffer& b = *buffer;
  auto importer = std::make_unique<XSpaceImporter>(std::move(buffer), options);
  naming_file(b, [&] {
    importer->prepare();
    uint64_t total = profile.events.size() + importer->event_count();
    if (total < std::numeric_limits<uint32_t>::max()) profile.events.reserve(total);
    importer->commit(profile, host);
  });
  profile.sources.push_back(std::move(importer));
}

void import_xspace_files(Profile& profile, const std::vector<HostFile>& files,
                         const ImportOptions& options) {
  const size_t n = files.size();
  const unsigned threads =
      options.threads != 0 ? options.threads : std::max(1u, std::thread::hardware_concurrency());
  const unsigned workers = static_cast<unsigned>(std::min<size_t>(threads, n));
  // Each file counts its lines on its share of the threads; decoding later uses them all.
  const unsigned per_file = std::max(1u, threads / std::max(1u, workers));
  std::vector<std::unique_ptr<XSpaceImporter>> prepared(n);
  // Files are handed out in order, so the error reported is that of the first bad file, as a
  // sequential load reports.
  xspace_import::parallel_for_in_order(workers, n, [&](size_t i) {
    auto buffer = Buffer::open(files[i].path);
    const Buffer& b = *buffer;
    auto importer = std::make_unique<XSpaceImporter>(std::move(buffer), options);
    naming_file(b, [&] { importer->prepare(per_file); });
    prepared[i] = std::move(importer);
  });
  // One allocation for every file's events, not one growing copy per file.
  uint64_t total = profile.events.size();
  for (const auto& imp : prepared) total += imp->event_count();
  if (total < std::numeric_limits<uint32_t>::max()) profile.events.reserve(total);
  for (size_t i = 0; i < n; ++i) {
    XSpaceImporter& imp = *prepared[i];
    naming_file(imp.buffer(), [&] { imp.commit(profile, files[i].host); });
    profile.sources.push_back(std::move(prepared[i]));
  }
}

void index_hlo_from_metadata(Profile& profile) {
  for (uint32_t pi = 0; pi < profile.planes.size(); ++pi) {
    const Plane& plane = profile.planes[pi];
    if (plane.kind != PlaneKind::kMetadata) continue;
    for (uint32_t mi = 0; mi < profile.event_metadata.size(); ++mi) {
      const EventMetadata& m = profile.event_metadata[mi];
      if (m.plane != pi) continue;
      for (const Stat& s : profile.metadata_stats(mi)) {
        if (profile.str(s.name) != "Hlo Proto" || !s.value.is_text()) continue;
        // GPU and TPU profiles key the entry by program id; the CPU backend numbers entries
        // on its own and states the program id as a stat.
        int64_t program = m.program_id != kNoProgram ? hlo_program_key(m.program_id) : m.id;
        try {
          profile.hlo.add(s.value.str, program);
        } catch (const InputError& e) {
          profile.warnings.push_back(profile.hosts[plane.host].path + ": skipped HloProto of " +
                                     std::string(profile.str(m.name)) + ": " + e.reason());
        }
      }
    }
  }
}

void finish_import(Profile& profile) {
  if (profile.hosts.empty() || profile.finished) return;
  // Lines are decoded after this (Profile::require_lines), directly on the common clock.
  int64_t base = std::numeric_limits<int64_t>::max();
  for (const Host& h : profile.hosts) base = std::min(base, h.base_ns);
  profile.base_ns = base;
  // What every importer hands over is checked here, once, whatever the format.
  check_profile_structure(profile);
  profile.finished = true;
}

}  // namespace jaxprof
