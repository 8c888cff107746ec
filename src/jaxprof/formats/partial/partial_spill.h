// A store of host partials in a temporary file: reading thousands of hosts, each host's partial
// is encoded (partial_file.h) and written here as soon as it is made, and the set (PartialSet)
// decodes one host at a time, so that what stays in memory per host is its head, not its
// figures. The file is unlinked when made: nothing is left behind, even by a crash. Where no
// temporary file can be made, or it cannot take more (a full disk), the encoded partials stay in
// memory. A host read from a partial file on disk is already encoded: it stays where it is, in
// the file's mapped bytes (put_in_place), and is decoded from there.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "jaxprof/io/buffer.h"
#include "jaxprof/model/partial/partial.h"

namespace jaxprof {

class PartialSpill : public PartialHostStore {
 public:
  PartialSpill();
  ~PartialSpill() override;
  PartialSpill(const PartialSpill&) = delete;
  PartialSpill& operator=(const PartialSpill&) = delete;

  size_t add_slot();
  // Stores `host` at `slot`; any thread.
  void put(size_t slot, const HostPartial& host);
  // Stores at `slot` the host whose message is `message`, a part of the partial file `file`
  // (read_partial_file_each), `host` as read from it: only its head is kept.
  void put_in_place(size_t slot, const HostPartial& host, std::shared_ptr<const Buffer> file,
                    std::string_view message);
  // Empties `slot` (a host of a file that then failed to read).
  void drop(size_t slot);
  bool filled(size_t slot) const;
  size_t slots() const;
  // The filled slots, in order.
  std::vector<size_t> filled_slots() const;

  HostPartial load(size_t id, uint32_t parts = kPartAll) const override;
  // What the host at `slot` says of itself (head_of), without decoding it.
  HostPartial head(size_t slot) const;
  // A warning about the host at `slot`, kept with it (e.g. that the hosts may not be one
  // capture's); load() and head() return it among the host's warnings.
  void add_warning(size_t slot, std::string warning);
  // Bytes in the temporary file (the rest is in memory).
  uint64_t bytes() const;

 private:
  struct Entry {
    bool filled = false;
    bool in_file = false;  // else in_memory
    uint64_t offset = 0, size = 0;
    std::string in_memory;
    // put_in_place: the partial file's bytes and the host's message among them.
    std::shared_ptr<const Buffer> file;
    std::string_view message;
    // Also what the encoded partial does not hold as given: the path (a file names an unnamed
    // host by itself), partial_file, op_capped.
    HostPartial head;
    std::vector<std::string> more_warnings;
  };
  // A host put in the temporary file or in memory, decoded (what load does for it).
  HostPartial read_back(Entry& e, uint32_t parts) const;

  mutable std::mutex lock_;
  std::vector<Entry> entries_;
  int fd_ = -1;
  bool file_full_ = false;
  std::string path_;
  uint64_t end_ = 0;
};

}  // namespace jaxprof
