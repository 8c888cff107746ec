// Baseline (b): the floor of "just touching every field". One single-threaded
// pass over the mapped file that walks every protobuf field of
// XSpace -> XPlane -> XLine -> XEvent -> XStat and of the metadata maps,
// recursing into every submessage and decoding every varint (packed child ids
// too), with no allocation per field and no name lookups. Strings and bytes
// are skipped over, not read.
//
// usage: baseline_walk [--read] FILE.xplane.pb
// prints: fields=N events=N total_ps=N varint_sum=N

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string_view>
#include <vector>

namespace {

enum Msg : std::uint8_t {
  kNone = 0,
  kSpace,
  kPlane,
  kLine,
  kEvent,
  kStat,
  kEventMetadata,
  kStatMetadata,
  kEventMetadataEntry,  // map<int64, XEventMetadata> entry: key=1, value=2
  kStatMetadataEntry,   // map<int64, XStatMetadata> entry: key=1, value=2
  kMsgCount,
};

constexpr int kMaxField = 12;

// kChild[m][f]: the message type of length-delimited field f of message m, or
// kNone when the field is a string/bytes leaf (or unknown).
struct ChildTable {
  Msg child[kMsgCount][kMaxField + 1] = {};
  constexpr ChildTable() {
    child[kSpace][1] = kPlane;
    child[kPlane][3] = kLine;
    child[kPlane][4] = kEventMetadataEntry;
    child[kPlane][5] = kStatMetadataEntry;
    child[kPlane][6] = kStat;
    child[kLine][4] = kEvent;
    child[kEvent][4] = kStat;
    child[kEventMetadata][5] = kStat;
    child[kEventMetadataEntry][2] = kEventMetadata;
    child[kStatMetadataEntry][2] = kStatMetadata;
  }
};
constexpr ChildTable kChildren;

struct Counters {
  std::uint64_t fields = 0;
  std::uint64_t events = 0;
  std::int64_t total_ps = 0;
  std::uint64_t varint_sum = 0;
};

// Plain varint decoder: one-byte fast path, then a byte loop. Returns nullptr
// on a truncated or over-long varint.
inline const std::uint8_t* ReadVarint(const std::uint8_t* p, const std::uint8_t* end,
                                      std::uint64_t* out) {
  if (p < end && *p < 0x80) {
    *out = *p;
    return p + 1;
  }
  std::uint64_t result = 0;
  for (int shift = 0; shift < 64 && p < end; shift += 7) {
    std::uint8_t b = *p++;
    result |= static_cast<std::uint64_t>(b & 0x7F) << shift;
    if (b < 0x80) {
      *out = result;
      return p;
    }
  }
  return nullptr;
}

// Walks one message of type `m` spanning [p, end). Returns false on malformed
// input.
bool Walk(Msg m, const std::uint8_t* p, const std::uint8_t* end, Counters* c) {
  if (m == kEvent) ++c->events;
  while (p < end) {
    std::uint64_t tag;
    p = ReadVarint(p, end, &tag);
    if (p == nullptr) return false;
    const std::uint64_t field = tag >> 3;
    ++c->fields;
    switch (tag & 7) {
      case 0: {  // varint
        std::uint64_t v;
        p = ReadVarint(p, end, &v);
        if (p == nullptr) return false;
        c->varint_sum += v;
        if (m == kEvent && field == 3) c->total_ps += static_cast<std::int64_t>(v);
        break;
      }
      case 1:  // fixed64 (double_value)
        if (end - p < 8) return false;
        p += 8;
        break;
      case 5:  // fixed32
        if (end - p < 4) return false;
        p += 4;
        break;
      case 2: {  // length-delimited
        std::uint64_t len;
        p = ReadVarint(p, end, &len);
        if (p == nullptr || len > static_cast<std::uint64_t>(end - p)) return false;
        const std::uint8_t* sub_end = p + len;
        Msg child = field <= kMaxField ? kChildren.child[m][field] : kNone;
        if (child != kNone) {
          if (!Walk(child, p, sub_end, c)) return false;
        } else if (m == kEventMetadata && field == 6) {
          // packed repeated int64 child_id
          const std::uint8_t* q = p;
          while (q < sub_end) {
            std::uint64_t v;
            q = ReadVarint(q, sub_end, &v);
            if (q == nullptr) return false;
            c->varint_sum += v;
          }
        }
        p = sub_end;
        break;
      }
      default:  // groups (3, 4) and 6, 7 do not occur in XSpace
        return false;
    }
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  bool use_read = false;
  const char* path = nullptr;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--read") {
      use_read = true;
    } else if (path == nullptr && !arg.empty() && arg[0] != '-') {
      path = argv[i];
    } else {
      path = nullptr;
      break;
    }
  }
  if (path == nullptr) {
    std::fprintf(stderr, "usage: baseline_walk [--read] FILE.xplane.pb\n");
    return 2;
  }

  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    std::fprintf(stderr, "baseline_walk: cannot open %s: %s\n", path, std::strerror(errno));
    return 1;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    std::fprintf(stderr, "baseline_walk: cannot stat %s: %s\n", path, std::strerror(errno));
    return 1;
  }
  const std::size_t size = static_cast<std::size_t>(st.st_size);

  const std::uint8_t* data = nullptr;
  void* mapped = MAP_FAILED;
  std::vector<std::uint8_t> buffer;
  if (size == 0) {
    static const std::uint8_t kEmpty = 0;
    data = &kEmpty;
  } else if (use_read) {
    buffer.resize(size);
    std::size_t done = 0;
    while (done < size) {
      ssize_t n = ::read(fd, buffer.data() + done, size - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        std::fprintf(stderr, "baseline_walk: short read on %s\n", path);
        return 1;
      }
      done += static_cast<std::size_t>(n);
    }
    data = buffer.data();
  } else {
    mapped = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (mapped == MAP_FAILED) {
      std::fprintf(stderr, "baseline_walk: cannot map %s: %s\n", path, std::strerror(errno));
      return 1;
    }
    ::madvise(mapped, size, MADV_SEQUENTIAL);
    data = static_cast<const std::uint8_t*>(mapped);
  }
  ::close(fd);

  Counters c;
  if (!Walk(kSpace, data, data + size, &c)) {
    std::fprintf(stderr, "baseline_walk: %s is not a valid XSpace protobuf\n", path);
    return 1;
  }
  std::printf("fields=%" PRIu64 " events=%" PRIu64 " total_ps=%" PRId64 " varint_sum=%" PRIu64 "\n",
              c.fields, c.events, c.total_ps, c.varint_sum);
  if (mapped != MAP_FAILED) ::munmap(mapped, size);
  return 0;
}
