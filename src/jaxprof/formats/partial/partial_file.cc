#include "jaxprof/formats/partial/partial_file.h"

#include <fmt/format.h>
#include <zlib.h>

#include <cstdio>
#include <functional>
#include <limits>
#include <memory>

#include "jaxprof/common/error.h"
#include "jaxprof/formats/partial/partial_io.h"
#include "jaxprof/io/buffer.h"
#include "jaxprof/wire/reader.h"
#include "jaxprof/wire/writer.h"

namespace jaxprof {

namespace {

using partial_io::write_host;
using wire::Writer;
// A host read, with its message's bytes in the file.
using HostVisitor = std::function<void(HostPartial&&, std::string_view)>;

// A host whose profile's path was not recorded is named by the file it came from, so that every
// message about it names a file.
void name_by_file(HostPartial& h, const std::string& path) {
  if (h.path.empty()) h.path = path;
  h.partial_file = path;
}

// The file's own fields (partial.proto PartialFile): its magic, its version and its hosts, each
// host read by partial_io::read_host (partial_host_io.cc and the files beside it).
class FileReader {
 public:
  FileReader(std::string_view bytes, const std::string& path) : in_(bytes, path) {}

  // `decompressed`: the bytes are a .gz file's contents (for the message of a file cut short).
  // Each host goes to `fn` as soon as it is read.
  void file(std::string_view bytes, bool decompressed, const HostVisitor& fn) const {
    wire::Reader top(bytes, in_.origin());
    try {
      fields(top, fn);
    } catch (const InputError&) {
      if (!bytes.empty()) throw_if_cut_short(bytes, top.field_offset(), decompressed);
      throw;
    }
  }

 private:
  void fields(wire::Reader& top, const HostVisitor& fn) const {
    bool magic = false;
    uint64_t version = 0;
    wire::Field field;
    while (top.next(field)) {
      const wire::Field& f = field;
      if (f.number == 1 && f.type == wire::WireType::kLen) magic = f.bytes == kPartialMagic;
      if (!magic) throw InputError(in_.path(), "not a jaxprof partial file");
      if (f.number == 2) {
        version = f.value;
        if (version != kPartialVersion)
          throw InputError(in_.path(),
                           fmt::format("partial file version {}; this jaxprof reads "
                                       "version {}: write it again with `jaxprof partial`",
                                       version, kPartialVersion));
      }
      if (f.number == 3) {
        if (version == 0) in_.bad("hosts before the version");
        fn(partial_io::read_host(in_, f.bytes), f.bytes);
      }
    }
    if (!magic) throw InputError(in_.path(), "not a jaxprof partial file");
    if (version == 0) in_.bad("no version");
  }

  // A file cut off while it was written (or copied) ends inside its last top-level field, a
  // host mostly: says so when the field at `offset` runs past the end by a length a host can
  // have (damaged bytes give lengths of terabytes).
  void throw_if_cut_short(std::string_view bytes, int64_t offset, bool decompressed) const {
    if (offset < 0 || static_cast<uint64_t>(offset) >= bytes.size()) return;
    uint64_t end = wire::end_past_message(bytes, static_cast<uint64_t>(offset));
    if (end == 0 || end - static_cast<uint64_t>(offset) > std::numeric_limits<uint32_t>::max())
      return;
    bool is_host = static_cast<uint8_t>(bytes[offset]) == (3 << 3 | 2);
    std::string what = is_host ? "a host's partial" : "its last field";
    what += end == bytes.size() + 1
                ? " is cut short"
                : fmt::format(" needs {} bytes more than there are", end - bytes.size());
    throw truncated_input(in_.path(), what, offset, bytes.size(), decompressed);
  }

  const partial_io::Decoder in_;
};

}  // namespace

bool is_partial_file_name(std::string_view name) {
  return name.ends_with(".partial") || name.ends_with(".partial.gz");
}

bool looks_like_partial(std::string_view bytes) {
  // Field 1, length-delimited, then the magic.
  return bytes.size() > kPartialMagic.size() + 2 && bytes[0] == 0x0a &&
         static_cast<size_t>(bytes[1]) == kPartialMagic.size() &&
         bytes.substr(2, kPartialMagic.size()) == kPartialMagic;
}

std::string write_partial_file(const std::vector<const HostPartial*>& hosts) {
  Writer w;
  w.bytes(1, kPartialMagic);
  w.varint(2, kPartialVersion);
  for (const HostPartial* h : hosts) w.message(3, write_host(*h));
  return w.take();
}

std::string write_partial_file(const PartialSet& set) {
  Writer w;
  w.bytes(1, kPartialMagic);
  w.varint(2, kPartialVersion);
  set.for_each_host([&](uint32_t, const HostPartial& h) { w.message(3, write_host(h)); });
  return w.take();
}

void read_partial_file_each(std::string_view bytes, const std::string& path,
                            const std::function<void(HostPartial&&, std::string_view)>& fn,
                            bool decompressed) {
  try {
    FileReader(bytes, path).file(bytes, decompressed, [&](HostPartial&& h, std::string_view msg) {
      name_by_file(h, path);
      fn(std::move(h), msg);
    });
  } catch (const InputError& e) {
    if (e.file().empty()) throw e.with_file(path);
    throw;
  }
}

void read_partial_file_each(std::string_view bytes, const std::string& path,
                            const std::function<void(HostPartial&&)>& fn, bool decompressed) {
  read_partial_file_each(
      bytes, path, [&](HostPartial&& h, std::string_view) { fn(std::move(h)); }, decompressed);
}

HostPartial read_partial_host(std::string_view file, std::string_view host, const std::string& path,
                              uint32_t parts) {
  try {
    HostPartial h = partial_io::read_host(partial_io::Decoder(file, path), host, parts);
    name_by_file(h, path);
    return h;
  } catch (const InputError& e) {
    if (e.file().empty()) throw e.with_file(path);
    throw;
  }
}

std::vector<HostPartial> read_partial_file(std::string_view bytes, const std::string& path,
                                           bool decompressed) {
  std::vector<HostPartial> hosts;
  read_partial_file_each(
      bytes, path, [&](HostPartial&& h) { hosts.push_back(std::move(h)); }, decompressed);
  return hosts;
}

void read_partial_path_each(const std::string& path, const std::function<void(HostPartial&&)>& fn) {
  std::shared_ptr<Buffer> buffer = Buffer::open(path);
  read_partial_file_each(buffer->view(), path, fn, buffer->compressed());
}

std::vector<HostPartial> read_partial_path(const std::string& path) {
  std::vector<HostPartial> hosts;
  read_partial_path_each(path, [&](HostPartial&& h) { hosts.push_back(std::move(h)); });
  return hosts;
}

void save_partial_file(const std::string& path, const std::string& bytes) {
  if (path.ends_with(".gz")) {
    gzFile f = gzopen(path.c_str(), "wb6");
    if (!f) throw InputError(path, "cannot write the partial file");
    bool ok = gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())) ==
              static_cast<int>(bytes.size());
    ok = gzclose(f) == Z_OK && ok;
    if (!ok) throw InputError(path, "cannot write the partial file");
    return;
  }
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) throw InputError(path, "cannot write the partial file");
  bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  ok = std::fclose(f) == 0 && ok;
  if (!ok) throw InputError(path, "cannot write the partial file");
}

}  // namespace jaxprof
