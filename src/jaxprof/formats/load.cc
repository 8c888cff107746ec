#include "jaxprof/formats/load.h"

#include <filesystem>
#include <limits>

#include "jaxprof/common/error.h"
#include "jaxprof/formats/chrome_trace/chrome_trace.h"
#include "jaxprof/formats/nsys_jax/nsys_jax.h"
#include "jaxprof/formats/partial/session_check.h"
#include "jaxprof/wire/reader.h"

namespace jaxprof {

namespace {

// An xla.HloProto wraps the module in field 1; a bare HloModuleProto has its name (a string) in
// field 1. Tell them apart by whether field 1 itself parses as a message whose field 1 is bytes.
bool is_hlo_proto_wrapper(std::string_view bytes, const uint8_t* origin) {
  try {
    wire::Reader r(bytes, origin);
    wire::Field f;
    if (!r.next(f) || f.number != 1 || f.type != wire::WireType::kLen) return false;
    wire::Reader inner(f.bytes, origin);
    wire::Field g;
    bool any = false;
    while (inner.next(g)) any = true;
    return any;
  } catch (const InputError&) {
    return false;
  }
}

void check_one_session(LoadedProfile& out) {
  check_one_capture(out.files, capture_facts(out.profile), out.profile.warnings);
}

}  // namespace

void load_hlo_file(Profile& profile, const std::string& path) {
  auto buf = Buffer::open(path);
  profile.buffers.push_back(buf);
  try {
    profile.hlo.add(buf->view(), -1, !is_hlo_proto_wrapper(buf->view(), buf->data()));
  } catch (const InputError& e) {
    // A file cut short fails on its last top-level field, which runs past the end (with a length
    // a module can have: damaged bytes give lengths of terabytes).
    uint64_t end = e.offset() < 0 ? 0 : wire::end_past_message(buf->view(), e.offset());
    if (end != 0 && end - e.offset() <= std::numeric_limits<uint32_t>::max())
      throw truncated_input(path, "the HloProto's last field is cut short", e.offset(), buf->size(),
                            buf->compressed());
    throw InputError(path, "not a valid HloProto: " + e.reason(), e.offset());
  }
}

void load_profile(const std::vector<std::string>& paths, const LoadOptions& options,
                  LoadedProfile& out) {
  if (paths.empty()) throw InputError("", "no profile path given");
  std::vector<std::string> profiles, hlo_files;
  for (const auto& p : paths) {
    std::string name = std::filesystem::path(p).filename().string();
    (is_hlo_file_name(name) ? hlo_files : profiles).push_back(p);
  }
  if (profiles.empty())
    throw InputError(paths.front(),
                     "only HLO files given; pass a profile (*.xplane.pb or a log "
                     "directory) too");

  // nsys-jax archives: each zip is one process, or several (nsys-jax-combine).
  size_t zips = 0;
  for (const auto& p : profiles) zips += is_zip_file(p);
  if (zips > 0) {
    if (zips != profiles.size())
      throw InputError(profiles.front(),
                       "give either nsys-jax archives (*.zip) or XSpace profiles");
    out.files.path = profiles.front();
    for (const auto& p : profiles) {
      import_nsys_jax(out.profile, Buffer::open(p), "", options.import);
      out.files.hosts.push_back(HostFile{std::filesystem::path(p).stem().string(), p});
    }
    for (const auto& f : hlo_files) {
      load_hlo_file(out.profile, f);
      out.files.hlo_files.push_back(f);
    }
    finish_import(out.profile);
    check_one_session(out);
    // Several processes: their clocks are aligned so straggler and wait times mean something.
    if (out.profile.hosts.size() > 1) {
      align_nsys_jax_clocks(out.profile);
      out.profile.clocks_aligned = true;
    }
    return;
  }

  DiscoverOptions discover{options.session, options.hosts};
  if (profiles.size() == 1) {
    out.files = discover_profile(profiles.front(), discover);
  } else {
    // Several files: one host each.
    out.files.path = profiles.front();
    for (const auto& p : profiles) {
      std::error_code ec;
      if (std::filesystem::is_directory(p, ec))
        throw InputError(p, "give either one log directory or several *.xplane.pb files");
      ProfileFiles one = discover_profile(p, DiscoverOptions{});
      out.files.hosts.insert(out.files.hosts.end(), one.hosts.begin(), one.hosts.end());
    }
  }
  // Chrome traces keep times relative to their session start, xplanes since the epoch: one clock
  // cannot hold both.
  size_t traces = 0;
  for (const auto& h : out.files.hosts)
    traces += is_chrome_trace_file_name(std::filesystem::path(h.path).filename().string());
  if (traces > 0 && traces < out.files.hosts.size())
    throw InputError(paths.front(), "cannot combine Chrome trace JSON with *.xplane.pb files");
  if (traces > 0) {
    for (const auto& h : out.files.hosts) {
      ChromeTraceOptions trace_options;
      trace_options.release_pages = options.import.release_pages;
      import_chrome_trace(out.profile, Buffer::open(h.path), h.host, trace_options);
    }
  } else {
    // Several hosts' files are read on several threads, then join the profile in host order.
    import_xspace_files(out.profile, out.files.hosts, options.import);
  }
  index_hlo_from_metadata(out.profile);
  for (const auto& f : out.files.hlo_files) load_hlo_file(out.profile, f);
  for (const auto& f : hlo_files) {
    load_hlo_file(out.profile, f);
    out.files.hlo_files.push_back(f);
  }
  finish_import(out.profile);
  check_one_session(out);
}

}  // namespace jaxprof
