// Partial summaries of many hosts (docs/multihost.md): what jaxprof.distributed computes on
// workers and merges, and what jaxprof-dask prints of them as the command line would.
#include <cstring>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "_core.h"
#include "jaxprof/analysis/hosts/hosts.h"
#include "jaxprof/analysis/partial/extract_partials.h"
#include "jaxprof/analysis/summary/summary.h"
#include "jaxprof/common/error.h"
#include "jaxprof/common/units.h"
#include "jaxprof/formats/partial/partial_file.h"
#include "jaxprof/formats/partial/partial_spill.h"
#include "jaxprof/formats/partial/session_check.h"
#include "jaxprof/formats/xplane/xplane.h"
#include "jaxprof/pipeline/load_partials.h"
#include "jaxprof/render/text/hosts_render.h"
#include "jaxprof/render/text/input_render.h"
#include "jaxprof/render/text/summary_render.h"
#include "jaxprof/render/text/text.h"

namespace jaxprof::python {

using namespace nb::literals;

namespace {

nb::bytes to_bytes(const std::string& s) { return nb::bytes(s.data(), s.size()); }

uint32_t parts_named(const std::string& what) {
  if (what == "all") return kPartAll;
  if (what == "summary") return summary_parts() | kPartSteps;  // and `hosts`
  throw InputError("", "unknown partial parts '" + what + "' (all or summary)");
}

// The partials of the hosts behind `paths` (profiles as the CLI takes them, or partials), one
// file's bytes; and the hosts skipped with keep_going as (host, path, reason).
std::tuple<nb::bytes, std::vector<std::tuple<std::string, std::string, std::string>>>
partials_of_paths(std::vector<std::string> paths, std::string session,
                  std::vector<std::string> hosts, unsigned threads, bool keep_going,
                  std::string parts) {
  std::string bytes;
  std::vector<std::tuple<std::string, std::string, std::string>> skipped;
  {
    nb::gil_scoped_release release;
    PartialLoadOptions o;
    o.session = std::move(session);
    o.hosts = std::move(hosts);
    o.extract.parts = parts_named(parts);
    o.import.threads = threads;
    o.keep_going = keep_going;
    LoadedPartials loaded;
    load_partials(paths, o, loaded);
    bytes = write_partial_file(loaded.set);
    for (const SkippedHost& s : loaded.skipped) skipped.emplace_back(s.host, s.path, s.reason);
  }
  return {to_bytes(bytes), skipped};
}

// One XSpace's bytes (read wherever the caller runs, e.g. from object storage) as its partial.
nb::bytes partial_of_bytes(nb::bytes data, std::string host, std::string path, std::string parts) {
  std::vector<uint8_t> bytes(data.size());
  std::memcpy(bytes.data(), data.c_str(), data.size());
  std::string out;
  {
    nb::gil_scoped_release release;
    const uint64_t file_bytes = bytes.size();
    std::string_view view(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    if (has_gzip_magic(view)) bytes = gunzip(view, path, size_t(1) << 40);
    Profile profile;
    import_xspace(profile, Buffer::from_bytes(std::move(bytes), path), host);
    index_hlo_from_metadata(profile);
    finish_import(profile);
    PartialExtractOptions extract;
    extract.parts = parts_named(parts);
    std::vector<HostPartial> one = extract_partials(profile, extract);
    one.front().path = path;
    one.front().file_bytes = file_bytes;
    out = write_partial_file({&one.front()});
  }
  return to_bytes(out);
}

// `names` name the files in messages (their paths or URLs); files made in this process by the
// writer, which have none, are numbered. The hosts wait in a temporary file
// (formats/partial/partial_spill.h) and are decoded one at a time where the analyses allow it:
// merging and summarising a thousand hosts takes the memory of a few.
PartialSet read_set(const std::vector<nb::bytes>& files,
                    const std::vector<std::string>& names = {}) {
  auto spill = std::make_shared<PartialSpill>();
  for (size_t i = 0; i < files.size(); ++i)
    read_partial_file_each(std::string_view(files[i].c_str(), files[i].size()),
                           i < names.size() ? names[i] : "<partial " + std::to_string(i + 1) + ">",
                           [&](HostPartial&& h) { spill->put(spill->add_slot(), h); });
  PartialSet set;
  set.add_stored(spill, spill->filled_slots());
  return set;
}

// Warnings when the hosts of `file` may not be one capture's (named one by one); throws
// InputError when they were found in one directory (`from_directory`) and cannot be.
std::vector<std::string> check_partial_capture(nb::bytes file, std::string path,
                                               bool from_directory) {
  PartialSet set = read_set({file});
  ProfileFiles files;
  files.path = path;
  files.layout = from_directory ? ProfileLayout::kRunDir : ProfileLayout::kFile;
  std::vector<CaptureFacts> facts;
  for (const HostPartial& h : set.heads()) {
    files.hosts.push_back({h.host, h.path});
    facts.push_back(capture_facts(h));
  }
  std::vector<std::string> warnings;
  if (facts.size() > 1) check_one_capture(files, facts, warnings);
  return warnings;
}

// The union of partial files, as one file (the hosts in order; the same host twice is an error).
nb::bytes merge_partials(std::vector<nb::bytes> files, std::vector<std::string> names) {
  PartialSet set = read_set(files, names);
  std::string out;
  {
    nb::gil_scoped_release release;
    out = write_partial_file(set);
  }
  return to_bytes(out);
}

// `jaxprof summary` or `jaxprof hosts` of a set of partial files, in a CLI output format.
std::string render_partials(std::vector<nb::bytes> files, std::string command, std::string format,
                            size_t top, size_t observations) {
  OutputFormat f = OutputFormat::kTable;
  if (!parse_output_format(format, f)) throw InputError("", "unknown format '" + format + "'");
  PartialSet set = read_set(files);
  nb::gil_scoped_release release;
  if (command == "summary") {
    SummaryOptions o;
    o.top = top;
    o.observations = observations;
    return render_summary(summary_from_partials(set, o), f);
  }
  if (command == "hosts") return render_hosts(hosts_from_partials(set), f, top);
  throw InputError("", "unknown command '" + command + "' (summary or hosts)");
}

// Host names and file sizes of a partial file, without analysing it.
std::vector<std::tuple<std::string, std::string, uint64_t>> partial_hosts(nb::bytes file) {
  std::vector<std::tuple<std::string, std::string, uint64_t>> out;
  for (const HostPartial& h :
       read_partial_file(std::string_view(file.c_str(), file.size()), "<partial>"))
    out.emplace_back(h.host, h.path, h.file_bytes);
  return out;
}

// What was read, as the command line says it: its stderr line and its JSON "input" member.
std::pair<std::string, std::string> describe_input(
    std::string path, std::string layout, std::string session, std::string session_dir,
    std::vector<std::string> sessions, bool newest_by_default,
    std::vector<std::pair<std::string, std::string>> hosts) {
  ProfileFiles f;
  f.path = std::move(path);
  if (layout == "run-dir")
    f.layout = ProfileLayout::kRunDir;
  else if (layout == "log-dir")
    f.layout = ProfileLayout::kLogDir;
  else if (layout != "file")
    throw InputError("", "unknown layout '" + layout + "' (file, run-dir or log-dir)");
  f.session = std::move(session);
  f.session_dir = std::move(session_dir);
  f.sessions = std::move(sessions);
  f.newest_by_default = newest_by_default;
  for (auto& [host, file] : hosts) f.hosts.push_back({std::move(host), std::move(file)});
  return {render_input_line(f), render_input_json(f)};
}

}  // namespace

void bind_partials(nb::module_& m) {
  m.def("partials_of_paths", &partials_of_paths, "paths"_a, "session"_a, "hosts"_a, "threads"_a,
        "keep_going"_a, "parts"_a);
  m.def("partial_of_bytes", &partial_of_bytes, "data"_a, "host"_a, "path"_a, "parts"_a);
  m.def("merge_partials", &merge_partials, "files"_a, "names"_a = std::vector<std::string>{});
  // For command-line tools built on the package (jaxprof-dask): the CLI's table layout and hints.
  m.def(
      "set_table_layout",
      [](bool wide, size_t line_width, bool python) {
        set_table_layout({.wide = wide, .line_width = line_width, .python = python});
      },
      "wide"_a, "line_width"_a, "python"_a);
  m.def(
      "format_bytes", [](double bytes) { return human_bytes(bytes); }, "bytes"_a);
  m.def("check_partial_capture", &check_partial_capture, "file"_a, "path"_a, "from_directory"_a);
  m.def("render_partials", &render_partials, "files"_a, "command"_a, "format"_a, "top"_a,
        "observations"_a);
  m.def("partial_hosts", &partial_hosts, "file"_a);
  m.def("describe_input", &describe_input, "path"_a, "layout"_a, "session"_a, "session_dir"_a,
        "sessions"_a, "newest_by_default"_a, "hosts"_a);
}

}  // namespace jaxprof::python
