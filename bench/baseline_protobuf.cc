// Baseline (a): the straightforward program anyone would write with
// libprotobuf generated code. Read the file, parse it into the generated
// XSpace (on an Arena), then for every plane and every event add the event's
// duration_ps to a (count, total) keyed by the event metadata name.
//
// usage: baseline_protobuf [--no-arena] FILE.xplane.pb
// prints: names=N events=N total_ps=N (and the top names with --top K)

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <google/protobuf/arena.h>

#include "xplane.pb.h"

namespace {

struct Totals {
  std::uint64_t count = 0;
  std::int64_t total_ps = 0;
};

bool ReadWholeFile(const char* path, std::string* out) {
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    std::fprintf(stderr, "baseline_protobuf: cannot open %s: %s\n", path, std::strerror(errno));
    return false;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    std::fprintf(stderr, "baseline_protobuf: cannot stat %s: %s\n", path, std::strerror(errno));
    ::close(fd);
    return false;
  }
  out->resize(static_cast<std::size_t>(st.st_size));
  std::size_t done = 0;
  while (done < out->size()) {
    ssize_t n = ::read(fd, out->data() + done, out->size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      std::fprintf(stderr, "baseline_protobuf: short read on %s\n", path);
      ::close(fd);
      return false;
    }
    done += static_cast<std::size_t>(n);
  }
  ::close(fd);
  return true;
}

// Sums per event-metadata name over every plane. Keys view strings owned by
// the parsed message, which outlives the table.
void Aggregate(const jaxprof_bench::XSpace& space,
               std::unordered_map<std::string_view, Totals>* by_name) {
  for (const auto& plane : space.planes()) {
    const auto& metadata = plane.event_metadata();
    for (const auto& line : plane.lines()) {
      for (const auto& event : line.events()) {
        std::string_view name;
        auto it = metadata.find(event.metadata_id());
        if (it != metadata.end()) name = it->second.name();
        Totals& t = (*by_name)[name];
        t.count += 1;
        t.total_ps += event.duration_ps();
      }
    }
  }
}

int Usage() {
  std::fprintf(stderr, "usage: baseline_protobuf [--no-arena] [--top K] FILE.xplane.pb\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  bool use_arena = true;
  int top = 0;
  const char* path = nullptr;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--no-arena") {
      use_arena = false;
    } else if (arg == "--top" && i + 1 < argc) {
      top = std::atoi(argv[++i]);
    } else if (!arg.empty() && arg[0] == '-') {
      return Usage();
    } else if (path == nullptr) {
      path = argv[i];
    } else {
      return Usage();
    }
  }
  if (path == nullptr) return Usage();

  std::string bytes;
  if (!ReadWholeFile(path, &bytes)) return 1;
  if (bytes.size() > static_cast<std::size_t>(INT32_MAX)) {
    std::fprintf(stderr, "baseline_protobuf: %s is over 2 GiB, too large for one message\n", path);
    return 1;
  }

  // Large arena blocks: the parsed tree of an 80 MB profile is a few hundred
  // MB of small objects, and the default 8 KiB blocks cost many mallocs.
  google::protobuf::ArenaOptions options;
  options.start_block_size = 64 * 1024;
  options.max_block_size = 4 * 1024 * 1024;
  std::unique_ptr<google::protobuf::Arena> arena;
  std::unique_ptr<jaxprof_bench::XSpace> owned;
  jaxprof_bench::XSpace* space = nullptr;
  if (use_arena) {
    arena = std::make_unique<google::protobuf::Arena>(options);
    space = google::protobuf::Arena::CreateMessage<jaxprof_bench::XSpace>(arena.get());
  } else {
    owned = std::make_unique<jaxprof_bench::XSpace>();
    space = owned.get();
  }
  if (!space->ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    std::fprintf(stderr, "baseline_protobuf: %s is not a valid XSpace protobuf\n", path);
    return 1;
  }
  // The raw bytes are no longer needed; give them back before aggregating so
  // that the peak is the parsed tree, not tree + file.
  std::string().swap(bytes);

  std::unordered_map<std::string_view, Totals> by_name;
  by_name.reserve(4096);
  Aggregate(*space, &by_name);

  std::uint64_t events = 0;
  std::int64_t total_ps = 0;
  for (const auto& [name, t] : by_name) {
    events += t.count;
    total_ps += t.total_ps;
  }
  std::printf("names=%zu events=%" PRIu64 " total_ps=%" PRId64 "\n", by_name.size(), events,
              total_ps);
  if (top > 0) {
    std::vector<std::pair<std::string_view, Totals>> rows(by_name.begin(), by_name.end());
    std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
      return a.second.total_ps != b.second.total_ps ? a.second.total_ps > b.second.total_ps
                                                    : a.first < b.first;
    });
    if (rows.size() > static_cast<std::size_t>(top)) rows.resize(static_cast<std::size_t>(top));
    for (const auto& [name, t] : rows) {
      std::printf("%20" PRId64 " ps %10" PRIu64 "x  %.*s\n", t.total_ps, t.count,
                  static_cast<int>(std::min<std::size_t>(name.size(), 100)), name.data());
    }
  }
  return 0;
}
