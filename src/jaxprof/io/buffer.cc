#include "jaxprof/io/buffer.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>

#include "jaxprof/common/error.h"

namespace jaxprof {

namespace {

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

// Deflate cannot expand data by more than about 1032x; anything beyond is not a real profile.
constexpr size_t kMaxInflateRatio = 1100;
constexpr size_t kMinInflateCap = size_t{64} << 20;

}  // namespace

bool has_gzip_magic(std::string_view bytes) {
  return bytes.size() >= 2 && static_cast<uint8_t>(bytes[0]) == 0x1f &&
         static_cast<uint8_t>(bytes[1]) == 0x8b;
}

Buffer::~Buffer() {
  if (mapped_ && data_ != nullptr) ::munmap(const_cast<uint8_t*>(data_), size_);
}

std::shared_ptr<Buffer> Buffer::open(const std::string& path) {
  Fd f;
  f.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (f.fd < 0) throw InputError(path, std::string("cannot open: ") + std::strerror(errno));
  struct stat st;
  if (::fstat(f.fd, &st) != 0)
    throw InputError(path, std::string("cannot stat: ") + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) throw InputError(path, "is a directory, expected a file");
  if (!S_ISREG(st.st_mode)) throw InputError(path, "is not a regular file");
  if (st.st_size == 0) throw InputError(path, "file is empty");

  auto buf = std::shared_ptr<Buffer>(new Buffer());
  buf->path_ = path;
  buf->size_ = static_cast<size_t>(st.st_size);
  void* p = ::mmap(nullptr, buf->size_, PROT_READ, MAP_PRIVATE, f.fd, 0);
  if (p == MAP_FAILED) throw InputError(path, std::string("cannot map: ") + std::strerror(errno));
  buf->data_ = static_cast<const uint8_t*>(p);
  buf->mapped_ = true;
  ::madvise(p, buf->size_, MADV_SEQUENTIAL);

  if (has_gzip_magic(buf->view())) {
    size_t cap = std::max(kMinInflateCap, buf->size_ * kMaxInflateRatio);
    auto bytes = gunzip(buf->view(), path, cap, /*whole_file=*/true);
    auto out = from_bytes(std::move(bytes), path);
    out->compressed_ = true;
    return out;
  }
  return buf;
}

std::shared_ptr<Buffer> Buffer::from_bytes(std::vector<uint8_t> bytes, std::string path) {
  if (bytes.empty()) throw InputError(path, "input is empty");
  auto buf = std::shared_ptr<Buffer>(new Buffer());
  buf->path_ = std::move(path);
  buf->owned_ = std::move(bytes);
  buf->data_ = buf->owned_.data();
  buf->size_ = buf->owned_.size();
  return buf;
}

void Buffer::release(size_t begin, size_t end) const {
  if (!mapped_ || end <= begin) return;
  static const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  // Only whole pages inside the range.
  size_t first = (begin + page - 1) / page * page;
  size_t last = end / page * page;
  if (last <= first) return;
  ::madvise(const_cast<uint8_t*>(data_) + first, last - first, MADV_DONTNEED);
}

void BatchedRelease::add(size_t begin, size_t end) {
  if (!ranges_.empty() && ranges_.back().second >= begin)
    ranges_.back().second = end;
  else
    ranges_.emplace_back(begin, end);
  bytes_ += end - begin;
  if (bytes_ >= kBatch) flush();
}

void BatchedRelease::flush() {
  for (auto [b, e] : ranges_) buffer_->release(b, e);
  ranges_.clear();
  bytes_ = 0;
}

std::vector<uint8_t> gunzip(std::string_view compressed, const std::string& path, size_t max_output,
                            bool whole_file) {
  z_stream zs;
  std::memset(&zs, 0, sizeof zs);
  // 15 + 32: accept gzip or zlib headers.
  if (inflateInit2(&zs, 15 + 32) != Z_OK) throw InputError(path, "cannot initialise zlib");
  struct Guard {
    z_stream* z;
    ~Guard() { inflateEnd(z); }
  } guard{&zs};

  std::vector<uint8_t> out;
  // The gzip trailer holds the size mod 2^32: a good first guess for the output size, when deflate
  // can reach it (a damaged trailer must not make the first allocation gigabytes).
  size_t guess = compressed.size() * 4;
  if (compressed.size() >= 18) {
    uint32_t isize;
    std::memcpy(&isize, compressed.data() + compressed.size() - 4, 4);
    if (isize >= compressed.size() / 2 && isize <= max_output &&
        isize / kMaxInflateRatio <= compressed.size())
      guess = size_t{isize} + 1;
  }
  out.resize(std::min(std::max<size_t>(guess, 4096), max_output));

  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(compressed.data()));
  size_t in_left = compressed.size();
  size_t produced = 0;
  while (true) {
    if (produced == out.size()) {
      if (out.size() >= max_output)
        throw InputError(path, "gzip data expands beyond " + std::to_string(max_output >> 20) +
                                   " MiB; refusing (not a profile, or a decompression bomb)");
      out.resize(std::min(max_output, out.size() * 2));
    }
    uInt in_chunk = static_cast<uInt>(std::min<size_t>(in_left, 1u << 30));
    uInt out_chunk = static_cast<uInt>(std::min<size_t>(out.size() - produced, 1u << 30));
    zs.avail_in = in_chunk;
    zs.next_out = out.data() + produced;
    zs.avail_out = out_chunk;
    int rc = inflate(&zs, Z_NO_FLUSH);
    in_left -= in_chunk - zs.avail_in;
    produced += out_chunk - zs.avail_out;
    if (rc == Z_STREAM_END) {
      // Concatenated gzip members are one stream (what `cat a.gz b.gz` gives).
      if (in_left > 0 && has_gzip_magic({reinterpret_cast<const char*>(zs.next_in), in_left})) {
        inflateReset(&zs);
        continue;
      }
      break;
    }
    if ((rc == Z_BUF_ERROR || rc == Z_OK) && in_left == 0 && zs.avail_out > 0) {
      if (whole_file)
        throw truncated_input(path, "the gzip stream stops before its end",
                              static_cast<int64_t>(compressed.size()), compressed.size());
      throw InputError(path, "gzip stream ends early (truncated data)",
                       static_cast<int64_t>(compressed.size()));
    }
    if (rc != Z_OK && rc != Z_BUF_ERROR) {
      throw InputError(path,
                       std::string("corrupt gzip data: ") + (zs.msg ? zs.msg : "inflate error"),
                       static_cast<int64_t>(compressed.size() - in_left));
    }
  }
  out.resize(produced);
  // Shrinking copies the whole output; worth it only when the guess left much unused.
  if (out.capacity() - produced > produced / 8) out.shrink_to_fit();
  return out;
}

}  // namespace jaxprof
