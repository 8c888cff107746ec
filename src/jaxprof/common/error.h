// Errors the library reports. InputError means "the input is bad" (exit code 2 in the CLI);
// anything else escaping the library is an internal error.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace jaxprof {

class InputError : public std::runtime_error {
 public:
  // offset < 0 means "no byte offset known".
  InputError(std::string file, std::string reason, int64_t offset = -1);

  const std::string& file() const { return file_; }
  const std::string& reason() const { return reason_; }
  int64_t offset() const { return offset_; }

  // Returns a copy that names `file` (used when a decoder that only sees bytes reports an error).
  InputError with_file(const std::string& file) const;

 private:
  static std::string format(const std::string& file, const std::string& reason, int64_t offset);
  std::string file_;
  std::string reason_;
  int64_t offset_;
};

// The error for input that stops before its own structure says it ends: what a capture cut off
// while it was being written (or copied) looks like, as opposed to damaged bytes. `what` says what
// runs past the end, `offset` where it starts and `size` how many bytes there are: those of the
// file, or of its decompressed data when `decompressed`.
InputError truncated_input(const std::string& file, const std::string& what, int64_t offset,
                           uint64_t size, bool decompressed = false);

}  // namespace jaxprof
