#include "jaxprof/analysis/partial/extract_partials.h"
#include "jaxprof/pipeline/load_partials.h"

#include <fmt/format.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include <algorithm>
#include <atomic>
#include <exception>
#include <filesystem>
#include <mutex>
#include <thread>

#include "jaxprof/common/parallel_parts.h"
#include "jaxprof/common/error.h"
#include "jaxprof/formats/nsys_jax/nsys_jax.h"
#include "jaxprof/formats/partial/partial_file.h"
#include "jaxprof/formats/partial/partial_spill.h"
#include "jaxprof/formats/partial/session_check.h"

namespace fs = std::filesystem;

namespace jaxprof {

namespace {

std::vector<std::string> partials_in(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec))
    if (entry.is_regular_file(ec) && is_partial_file_name(entry.path().filename().string()))
      out.push_back(entry.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

bool is_partial_path(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) return !partials_in(path).empty();
  return is_partial_file_name(fs::path(path).filename().string());
}

uint64_t size_of(const std::string& path) {
  std::error_code ec;
  uint64_t n = fs::file_size(path, ec);
  return ec ? 0 : n;
}

// One host's profile, read alone and reduced to its partial.
HostPartial host_partial(const HostFile& file, const std::vector<std::string>& hlo_files,
                         const PartialLoadOptions& options, const ImportOptions& import) {
  LoadedProfile loaded;
  std::vector<std::string> paths = {file.path};
  paths.insert(paths.end(), hlo_files.begin(), hlo_files.end());
  LoadOptions lo;
  lo.import = import;
  load_profile(paths, lo, loaded);
  std::vector<HostPartial> one = extract_partials(loaded.profile, options.extract);
  if (one.size() != 1) throw InputError(file.path, "holds several hosts");
  one.front().host = file.host;
  return std::move(one.front());
}

// Runs fn(i) for i in [0, n) on `workers` threads, stopping early when fn throws and
// keep_going is false; returns the exception of the lowest index that failed.
template <typename Fn>
std::exception_ptr for_each_host(size_t n, size_t workers, Fn&& fn) {
  std::atomic<size_t> next{0};
  std::atomic<bool> stop{false};
  std::vector<std::exception_ptr> errors(n);
  auto work = [&] {
    for (size_t i; !stop && (i = next.fetch_add(1)) < n;) {
      try {
        fn(i);
      } catch (...) {
        errors[i] = std::current_exception();
        stop = true;
      }
    }
  };
  {
    std::vector<std::jthread> pool;
    for (size_t t = 1; t < workers; ++t) pool.emplace_back(work);
    work();
  }
  for (const std::exception_ptr& e : errors)
    if (e) return e;
  return nullptr;
}

}  // namespace

bool names_partials(const std::vector<std::string>& paths) {
  if (paths.empty()) return false;
  for (const std::string& p : paths)
    if (!is_partial_path(p)) return false;
  return true;
}

void load_partials(const std::vector<std::string>& paths, const PartialLoadOptions& options,
                   LoadedPartials& out) {
  if (paths.empty()) throw InputError("", "no profile path given");
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::string> partial_files, profiles, hlo_files;
  for (const std::string& p : paths) {
    std::string name = fs::path(p).filename().string();
    std::error_code ec;
    if (fs::is_directory(p, ec) && !partials_in(p).empty()) {
      for (std::string& f : partials_in(p)) partial_files.push_back(std::move(f));
    } else if (is_partial_file_name(name)) {
      partial_files.push_back(p);
    } else if (is_hlo_file_name(name)) {
      hlo_files.push_back(p);
    } else {
      profiles.push_back(p);
    }
  }
  if (profiles.empty() && partial_files.empty())
    throw InputError(paths.front(),
                     "only HLO files given; pass a profile (*.xplane.pb or a log directory) too");

  // Every host's partial goes to a temporary file as soon as it is made, and the set decodes one
  // at a time from there: what stays in memory per host is its head (PartialSet::heads), so
  // that summarising a thousand hosts takes the memory of ten (docs/multihost.md).
  auto spill = std::make_shared<PartialSpill>();
  // Profiles: XSpace files host by host; anything else (nsys-jax archives, whose processes'
  // clocks are aligned together; Chrome traces) as one profile.
  std::vector<HostFile> files;
  std::vector<std::string> beside;  // HLO files found next to the profiles
  bool whole = false;
  for (const std::string& p : profiles) whole |= is_zip_file(p);
  if (!profiles.empty() && !whole) {
    DiscoverOptions discover{options.session, options.hosts};
    if (profiles.size() == 1) {
      ProfileFiles found = discover_profile(profiles.front(), discover);
      files = found.hosts;
      beside = found.hlo_files;
      out.files = std::move(found);
    } else {
      out.files.path = profiles.front();
      for (const std::string& p : profiles) {
        std::error_code ec;
        if (fs::is_directory(p, ec))
          throw InputError(p, "give either one log directory or several *.xplane.pb files");
        ProfileFiles one = discover_profile(p, DiscoverOptions{});
        files.insert(files.end(), one.hosts.begin(), one.hosts.end());
      }
      out.files.hosts = files;
    }
    for (const HostFile& f : files)
      whole |= !is_xspace_file_name(fs::path(f.path).filename().string());
  }
  const size_t total = (whole ? 1 : files.size()) + partial_files.size();
  std::mutex progress_lock;
  size_t done = 0;
  auto report = [&](uint64_t bytes) {
    std::lock_guard<std::mutex> lock(progress_lock);
    ++done;
    out.bytes_read += bytes;
    if (options.progress)
      options.progress(
          {done, total, out.bytes_read,
           std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()});
  };

  if (whole) {
    LoadedProfile loaded;
    LoadOptions lo;
    lo.session = options.session;
    lo.hosts = options.hosts;
    lo.import = options.import;
    load_profile(profiles.size() == 1 ? std::vector<std::string>{profiles.front()} : profiles, lo,
                 loaded);
    for (const std::string& f : hlo_files) load_hlo_file(loaded.profile, f);
    std::vector<HostPartial> got = extract_partials(loaded.profile, options.extract);
    out.whole_profile = true;
    out.files = loaded.files;
    out.hosts_read += got.size();
    uint64_t bytes = 0;
    for (const Host& h : loaded.profile.hosts) bytes += size_of(h.path);
    report(bytes);
    for (HostPartial& h : got) spill->put(spill->add_slot(), h);
  } else if (!files.empty()) {
    std::vector<std::string> hlo = beside;
    hlo.insert(hlo.end(), hlo_files.begin(), hlo_files.end());
    // Hosts on several threads, their decoders sharing the rest: a few large hosts get threads
    // each, many small ones a thread each.
    const unsigned threads = options.import.threads
                                 ? options.import.threads
                                 : std::max(1u, std::thread::hardware_concurrency());
    const size_t workers = std::min<size_t>(threads, files.size());
    ImportOptions import = options.import;
    import.threads = static_cast<unsigned>(std::max<size_t>(1, threads / workers));
    const AnalysisThreads before = analysis_threads.load();
    analysis_threads.store(
        {.threads = import.threads, .split_small_work = before.split_small_work});
    // Slot i is file i's: the set's sums and messages see the hosts in file order.
    const size_t first = spill->slots();
    for (size_t i = 0; i < files.size(); ++i) spill->add_slot();
    std::vector<std::string> failed(files.size());
    std::exception_ptr error = for_each_host(files.size(), workers, [&](size_t i) {
      try {
        spill->put(first + i, host_partial(files[i], hlo, options, import));
      } catch (const InputError& e) {
        if (!options.keep_going) throw;
        failed[i] = e.what();
      }
#ifdef __GLIBC__
      malloc_trim(0);  // the profile's freed blocks go back to the system before the next host
#endif
      report(size_of(files[i].path));
    });
    analysis_threads.store(before);
    if (error) std::rethrow_exception(error);
    for (size_t i = 0; i < files.size(); ++i) {
      if (spill->filled(first + i))
        ++out.hosts_read;
      else
        out.skipped.push_back({files[i].host, files[i].path, failed[i]});
    }
  }

  for (const std::string& f : partial_files) {
    // Host by host: a file of a thousand hosts is never decoded whole. Its hosts count once the
    // whole file has read well.
    std::vector<size_t> slots_of_file;
    std::vector<HostFile> named;
    try {
      read_partial_path_each(f, [&](HostPartial&& h) {
        if (!options.hosts.empty() &&
            std::find(options.hosts.begin(), options.hosts.end(), h.host) == options.hosts.end())
          return;
        const size_t slot = spill->add_slot();
        spill->put(slot, h);
        slots_of_file.push_back(slot);
        named.push_back({h.host, f});
      });
    } catch (const InputError& e) {
      if (!options.keep_going) throw;
      for (size_t slot : slots_of_file) spill->drop(slot);
      out.skipped.push_back({fs::path(f).filename().string(), f, e.what()});
      report(0);
      continue;
    }
    report(size_of(f));
    out.hosts_read += named.size();
    for (HostFile& n : named) out.files.hosts.push_back(std::move(n));
  }
  if (out.files.path.empty() && !partial_files.empty()) {
    // Partials only: a directory of them is one capture's hosts, as a run directory is.
    std::error_code ec;
    out.files.path = paths.front();
    if (paths.size() == 1 && fs::is_directory(paths.front(), ec)) {
      out.files.layout = ProfileLayout::kRunDir;
      out.files.session_dir = paths.front();
    }
  }
  const std::vector<size_t> slots = spill->filled_slots();
  // The heads, in the order the hosts were read: what the checks below need of them.
  std::vector<HostPartial> heads;
  for (size_t slot : slots) heads.push_back(spill->head(slot));
  if (!out.whole_profile && heads.size() > 1) {
    std::vector<CaptureFacts> facts;
    for (const HostPartial& h : heads) facts.push_back(capture_facts(h));
    std::vector<std::string> warnings;
    check_one_capture(out.files, facts, warnings);
    // A partial file written from such files keeps the warning with a host: say it once.
    auto prefix = [](const std::string& w) { return std::string_view(w).substr(0, w.find(": ")); };
    for (std::string& w : warnings) {
      bool held = std::any_of(heads.begin(), heads.end(), [&](const HostPartial& h) {
        return std::any_of(h.warnings.begin(), h.warnings.end(),
                           [&](const std::string& x) { return prefix(x) == prefix(w); });
      });
      if (!held) spill->add_warning(slots.front(), std::move(w));
    }
  }
  if (!partial_files.empty() && !options.hosts.empty()) {
    for (const std::string& want : options.hosts) {
      bool found = std::any_of(heads.begin(), heads.end(),
                               [&](const HostPartial& h) { return h.host == want; });
      if (!found) throw InputError(partial_files.front(), "no host '" + want + "' in the partials");
    }
  }
  if (heads.empty() && !out.skipped.empty())
    throw InputError(out.skipped.front().path,
                     "no host could be read; the first: " + out.skipped.front().reason);
  heads.clear();
  out.set.add_stored(spill, slots);
}

}  // namespace jaxprof
