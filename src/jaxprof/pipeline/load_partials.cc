#include "jaxprof/pipeline/load_partials.h"

#include <fmt/format.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <filesystem>
#include <memory>
#include <mutex>
#include <thread>

#include "jaxprof/analysis/partial/extract_partials.h"
#include "jaxprof/common/error.h"
#include "jaxprof/common/parallel_parts.h"
#include "jaxprof/formats/nsys_jax/nsys_jax.h"
#include "jaxprof/formats/partial/partial_file.h"
#include "jaxprof/formats/partial/partial_spill.h"
#include "jaxprof/formats/partial/session_check.h"
#include "jaxprof/io/buffer.h"

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
HostPartial host_partial(const HostFile& file, size_t index,
                         const std::vector<std::string>& hlo_files,
                         const PartialLoadOptions& options, const ImportOptions& import,
                         bool one_profile) {
  LoadedProfile loaded;
  std::vector<std::string> paths = {file.path};
  paths.insert(paths.end(), hlo_files.begin(), hlo_files.end());
  LoadOptions lo;
  lo.import = import;
  load_profile(paths, lo, loaded);
  std::vector<HostPartial> one = extract_partials(loaded.profile, options.extract);
  if (one.size() != 1) throw InputError(file.path, "holds several hosts");
  if (one_profile && options.one_profile) options.one_profile(loaded.profile);
  if (!one_profile && options.each_profile) options.each_profile(index, loaded.profile);
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

// The paths given, by kind.
struct Inputs {
  std::vector<std::string> partial_files, profiles, hlo_files;
};

Inputs sort_inputs(const std::vector<std::string>& paths) {
  Inputs in;
  for (const std::string& p : paths) {
    std::string name = fs::path(p).filename().string();
    std::error_code ec;
    if (fs::is_directory(p, ec) && !partials_in(p).empty()) {
      for (std::string& f : partials_in(p)) in.partial_files.push_back(std::move(f));
    } else if (is_partial_file_name(name)) {
      in.partial_files.push_back(p);
    } else if (is_hlo_file_name(name)) {
      in.hlo_files.push_back(p);
    } else {
      in.profiles.push_back(p);
    }
  }
  if (in.profiles.empty() && in.partial_files.empty())
    throw InputError(paths.front(),
                     "only HLO files given; pass a profile (*.xplane.pb or a log directory) too");
  return in;
}

// The profiles' host files: XSpace files host by host; anything else (nsys-jax archives, whose
// processes' clocks are aligned together; Chrome traces) as one profile, for which this returns
// true. `beside`: HLO files found next to the profiles.
bool find_host_files(const std::vector<std::string>& profiles, const PartialLoadOptions& options,
                     std::vector<HostFile>& files, std::vector<std::string>& beside,
                     LoadedPartials& out) {
  bool whole = false;
  for (const std::string& p : profiles) whole |= is_zip_file(p);
  if (profiles.empty() || whole) return whole;
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
  return whole;
}

// Counts the hosts (or files) done and the bytes read, and tells options.progress; any thread.
class Progress {
 public:
  Progress(const PartialLoadOptions& options, std::chrono::steady_clock::time_point start,
           size_t total, LoadedPartials& out)
      : options_(options), start_(start), total_(total), out_(out) {}

  void report(uint64_t bytes) {
    std::lock_guard<std::mutex> lock(lock_);
    ++done_;
    out_.bytes_read += bytes;
    if (options_.progress)
      options_.progress(
          {done_, total_, out_.bytes_read,
           std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count()});
  }

 private:
  const PartialLoadOptions& options_;
  const std::chrono::steady_clock::time_point start_;
  const size_t total_;
  LoadedPartials& out_;
  std::mutex lock_;
  size_t done_ = 0;
};

// A profile read whole (nsys-jax archives, Chrome traces), its hosts' partials into `spill`.
void load_whole_profile(const Inputs& in, const PartialLoadOptions& options, PartialSpill& spill,
                        Progress& progress, LoadedPartials& out, bool one_profile) {
  LoadedProfile loaded;
  LoadOptions lo;
  lo.session = options.session;
  lo.hosts = options.hosts;
  lo.import = options.import;
  load_profile(
      in.profiles.size() == 1 ? std::vector<std::string>{in.profiles.front()} : in.profiles, lo,
      loaded);
  for (const std::string& f : in.hlo_files) load_hlo_file(loaded.profile, f);
  std::vector<HostPartial> got = extract_partials(loaded.profile, options.extract);
  if (one_profile && options.one_profile) options.one_profile(loaded.profile);
  out.whole_profile = true;
  out.files = loaded.files;
  out.hosts_read += got.size();
  uint64_t bytes = 0;
  for (const Host& h : loaded.profile.hosts) bytes += size_of(h.path);
  progress.report(bytes);
  for (HostPartial& h : got) spill.put(spill.add_slot(), h);
}

// The profiles' hosts, each read alone (several at once) and its partial put in `spill` in file
// order; `hlo`: the HLO files to read with each.
void load_host_files(const std::vector<HostFile>& files, const std::vector<std::string>& hlo,
                     const PartialLoadOptions& options, PartialSpill& spill, Progress& progress,
                     LoadedPartials& out, bool one_profile) {
  // Hosts on several threads, their decoders sharing the rest: a few large hosts get threads
  // each, many small ones a thread each.
  const unsigned threads = options.import.threads
                               ? options.import.threads
                               : std::max(1u, std::thread::hardware_concurrency());
  const size_t workers = std::min<size_t>(threads, files.size());
  ImportOptions import = options.import;
  import.threads = static_cast<unsigned>(std::max<size_t>(1, threads / workers));
  const AnalysisThreads before = analysis_threads.load();
  analysis_threads.store({.threads = import.threads, .split_small_work = before.split_small_work});
  // Slot i is file i's: the set's sums and messages see the hosts in file order.
  const size_t first = spill.slots();
  for (size_t i = 0; i < files.size(); ++i) spill.add_slot();
  std::vector<std::string> failed(files.size());
  std::exception_ptr error = for_each_host(files.size(), workers, [&](size_t i) {
    try {
      spill.put(first + i, host_partial(files[i], i, hlo, options, import, one_profile));
    } catch (const InputError& e) {
      if (!options.keep_going) throw;
      failed[i] = e.what();
    }
#ifdef __GLIBC__
    malloc_trim(0);  // the profile's freed blocks go back to the system before the next host
#endif
    progress.report(size_of(files[i].path));
  });
  analysis_threads.store(before);
  if (error) std::rethrow_exception(error);
  for (size_t i = 0; i < files.size(); ++i) {
    if (spill.filled(first + i))
      ++out.hosts_read;
    else
      out.skipped.push_back({files[i].host, files[i].path, failed[i]});
  }
}

// The partial files' hosts (those of options.hosts, if named) into `spill`, host by host: a file
// of a thousand hosts is never decoded whole. A file's hosts count once the whole file has read
// well.
void load_partial_files(const std::vector<std::string>& partial_files,
                        const PartialLoadOptions& options, PartialSpill& spill, Progress& progress,
                        LoadedPartials& out) {
  for (const std::string& f : partial_files) {
    std::vector<size_t> slots_of_file;
    std::vector<HostFile> named;
    try {
      std::shared_ptr<Buffer> file = Buffer::open(f);
      // A file on disk is mapped: its hosts stay where they are (1,000 hosts' merged file: the
      // summary took 3.3 s re-encoding them into the spill, 1.8 s held whole). A .gz file's
      // inflated bytes would stay in memory: its hosts go to the spill's file.
      const bool in_place = !file->compressed();
      read_partial_file_each(
          file->view(), f,
          [&](HostPartial&& h, std::string_view message) {
            if (!options.hosts.empty() && std::find(options.hosts.begin(), options.hosts.end(),
                                                    h.host) == options.hosts.end())
              return;
            const size_t slot = spill.add_slot();
            if (in_place)
              spill.put_in_place(slot, h, file, message);
            else
              spill.put(slot, h);
            slots_of_file.push_back(slot);
            named.push_back({h.host, f});
          },
          file->compressed());
    } catch (const InputError& e) {
      if (!options.keep_going) throw;
      for (size_t slot : slots_of_file) spill.drop(slot);
      out.skipped.push_back({fs::path(f).filename().string(), f, e.what()});
      progress.report(0);
      continue;
    }
    progress.report(size_of(f));
    out.hosts_read += named.size();
    for (HostFile& n : named) out.files.hosts.push_back(std::move(n));
  }
}

// Checks what the hosts read say of themselves (`heads`, in the order they were read): that they
// are one capture's (a warning, kept with the first host), that every host asked for among
// partial files was there, and that some host was read.
void check_hosts(const std::vector<HostPartial>& heads, const std::vector<size_t>& slots,
                 const std::vector<std::string>& partial_files, const PartialLoadOptions& options,
                 PartialSpill& spill, const LoadedPartials& out) {
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
      if (!held) spill.add_warning(slots.front(), std::move(w));
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
  const Inputs in = sort_inputs(paths);

  // Every host's partial goes to a temporary file as soon as it is made, and the set decodes one
  // at a time from there: what stays in memory per host is its head (PartialSet::heads), so
  // that summarising a thousand hosts takes the memory of ten (docs/multihost.md).
  auto spill = std::make_shared<PartialSpill>();
  std::vector<HostFile> files;
  std::vector<std::string> beside;  // HLO files found next to the profiles
  const bool whole = find_host_files(in.profiles, options, files, beside, out);
  Progress progress(options, start, (whole ? 1 : files.size()) + in.partial_files.size(), out);
  const bool one_profile = in.partial_files.empty() && (whole || files.size() == 1);
  if (whole) {
    load_whole_profile(in, options, *spill, progress, out, one_profile);
  } else if (!files.empty()) {
    std::vector<std::string> hlo = beside;
    hlo.insert(hlo.end(), in.hlo_files.begin(), in.hlo_files.end());
    load_host_files(files, hlo, options, *spill, progress, out, one_profile);
  }
  load_partial_files(in.partial_files, options, *spill, progress, out);
  if (out.files.path.empty() && !in.partial_files.empty()) {
    // Partials only: a directory of them is one capture's hosts, as a run directory is.
    std::error_code ec;
    out.files.path = paths.front();
    if (paths.size() == 1 && fs::is_directory(paths.front(), ec)) {
      out.files.layout = ProfileLayout::kRunDir;
      out.files.session_dir = paths.front();
    }
  }
  const std::vector<size_t> slots = spill->filled_slots();
  // The heads, in the order the hosts were read: what the checks need of them.
  std::vector<HostPartial> heads;
  for (size_t slot : slots) heads.push_back(spill->head(slot));
  check_hosts(heads, slots, in.partial_files, options, *spill, out);
  heads.clear();
  out.set.add_stored(spill, slots);
}

}  // namespace jaxprof
