#include "jaxprof/formats/partial/partial_spill.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "jaxprof/common/error.h"
#include "jaxprof/formats/partial/partial_file.h"
#include "jaxprof/formats/partial/partial_io.h"

namespace jaxprof {

namespace {

// $TMPDIR, else /tmp: made with mkstemp and unlinked at once.
int make_temporary(std::string& path) {
  const char* dir = std::getenv("TMPDIR");
  std::string base = dir && *dir ? dir : "/tmp";
  std::string name = (std::filesystem::path(base) / "jaxprof-partials-XXXXXX").string();
  int fd = mkstemp(name.data());
  if (fd < 0) return -1;
  unlink(name.c_str());
  path = name;
  return fd;
}

// The mapped pages of a host's message leave the resident set once it is decoded: a host at a
// time is in memory, not the whole merged file.
void release(const Buffer& file, std::string_view message) {
  const size_t begin = static_cast<size_t>(message.data() - file.view().data());
  file.release(begin, begin + message.size());
}

}  // namespace

PartialSpill::PartialSpill() { fd_ = make_temporary(path_); }

PartialSpill::~PartialSpill() {
  if (fd_ >= 0) close(fd_);
}

size_t PartialSpill::add_slot() {
  std::lock_guard<std::mutex> hold(lock_);
  entries_.emplace_back();
  return entries_.size() - 1;
}

void PartialSpill::put(size_t slot, const HostPartial& host) {
  // The host's message alone (as a partial file holds it), read back by read_partial_host.
  std::string bytes = partial_io::write_host(host).take();
  HostPartial head = head_of(host);
  std::lock_guard<std::mutex> hold(lock_);
  Entry& e = entries_.at(slot);
  e.head = std::move(head);
  e.size = bytes.size();
  // A file that cannot take more (a full disk) leaves this host and the next ones in memory.
  if (fd_ >= 0 && !file_full_) {
    uint64_t done = 0;
    while (done < bytes.size()) {
      ssize_t n =
          pwrite(fd_, bytes.data() + done, bytes.size() - done, static_cast<off_t>(end_ + done));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      done += static_cast<uint64_t>(n);
    }
    if (done == bytes.size()) {
      e.in_file = true;
      e.offset = end_;
      end_ += bytes.size();
    } else {
      file_full_ = true;  // what is written stays readable
    }
  }
  if (!e.in_file) e.in_memory = std::move(bytes);
  e.filled = true;
}

void PartialSpill::put_in_place(size_t slot, const HostPartial& host,
                                std::shared_ptr<const Buffer> file, std::string_view message) {
  HostPartial head = head_of(host);
  release(*file, message);
  std::lock_guard<std::mutex> hold(lock_);
  Entry& e = entries_.at(slot);
  e.head = std::move(head);
  e.file = std::move(file);
  e.message = message;
  e.filled = true;
}

void PartialSpill::drop(size_t slot) {
  std::lock_guard<std::mutex> hold(lock_);
  entries_.at(slot) = Entry{};
}

bool PartialSpill::filled(size_t slot) const {
  std::lock_guard<std::mutex> hold(lock_);
  return entries_.at(slot).filled;
}

size_t PartialSpill::slots() const {
  std::lock_guard<std::mutex> hold(lock_);
  return entries_.size();
}

std::vector<size_t> PartialSpill::filled_slots() const {
  std::lock_guard<std::mutex> hold(lock_);
  std::vector<size_t> out;
  for (size_t i = 0; i < entries_.size(); ++i)
    if (entries_[i].filled) out.push_back(i);
  return out;
}

uint64_t PartialSpill::bytes() const {
  std::lock_guard<std::mutex> hold(lock_);
  return end_;
}

HostPartial PartialSpill::load(size_t id, uint32_t parts) const {
  Entry e;
  {
    std::lock_guard<std::mutex> hold(lock_);
    const Entry& at = entries_.at(id);
    if (!at.filled) throw std::logic_error("PartialSpill::load of an empty slot");
    e.file = at.file;
    e.message = at.message;
    e.offset = at.offset;
    e.size = at.size;
    e.in_file = at.in_file;
    if (!at.in_file) e.in_memory = at.in_memory;
    e.head.path = at.head.path;
    e.head.partial_file = at.head.partial_file;
    e.head.op_capped = at.head.op_capped;
    e.more_warnings = at.more_warnings;
  }
  HostPartial h;
  if (e.file) {  // decoded where it is, in the partial file it was read from
    h = read_partial_host(e.file->view(), e.message, e.head.partial_file, parts);
    release(*e.file, e.message);
  } else {
    h = read_back(e, parts);
  }
  h.path = e.head.path;
  h.partial_file = e.head.partial_file;
  h.op_capped = e.head.op_capped;
  for (std::string& w : e.more_warnings) h.warnings.push_back(std::move(w));
  return h;
}

HostPartial PartialSpill::read_back(Entry& e, uint32_t parts) const {
  std::string bytes = std::move(e.in_memory);
  if (e.in_file) {
    bytes.resize(e.size);
    for (uint64_t done = 0; done < e.size;) {
      ssize_t n =
          pread(fd_, bytes.data() + done, e.size - done, static_cast<off_t>(e.offset + done));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0)
        throw InputError(path_, std::string("cannot read back the hosts' partials: ") +
                                    (n < 0 ? std::strerror(errno) : "the file is cut short"));
      done += static_cast<uint64_t>(n);
    }
  }
  try {
    return read_partial_host(bytes, bytes, path_.empty() ? "<partials>" : path_, parts);
  } catch (const InputError& err) {
    // The spill holds what the reader took from the user's input: name that input, not a
    // temporary file the user never made.
    const std::string& input = e.head.partial_file.empty() ? e.head.path : e.head.partial_file;
    throw InputError(input, "its summary could not be read back from the temporary file " +
                                (path_.empty() ? std::string("in memory") : path_) + ": " +
                                err.reason());
  }
}

HostPartial PartialSpill::head(size_t slot) const {
  std::lock_guard<std::mutex> hold(lock_);
  const Entry& e = entries_.at(slot);
  if (!e.filled) throw std::logic_error("PartialSpill::head of an empty slot");
  HostPartial h = e.head;
  h.warnings.insert(h.warnings.end(), e.more_warnings.begin(), e.more_warnings.end());
  return h;
}

void PartialSpill::add_warning(size_t slot, std::string warning) {
  std::lock_guard<std::mutex> hold(lock_);
  entries_.at(slot).more_warnings.push_back(std::move(warning));
}

}  // namespace jaxprof
