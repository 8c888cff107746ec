#include "jaxprof/common/error.h"

namespace jaxprof {

InputError::InputError(std::string file, std::string reason, int64_t offset)
    : std::runtime_error(format(file, reason, offset)),
      file_(std::move(file)),
      reason_(std::move(reason)),
      offset_(offset) {}

InputError InputError::with_file(const std::string& file) const {
  return InputError(file, reason_, offset_);
}

std::string InputError::format(const std::string& file, const std::string& reason, int64_t offset) {
  // Option errors name no file; input errors always do.
  std::string out = file.empty() ? reason : file + ": " + reason;
  if (offset >= 0) {
    out += " (at byte offset ";
    out += std::to_string(offset);
    out += ")";
  }
  return out;
}

InputError truncated_input(const std::string& file, const std::string& what, int64_t offset,
                           uint64_t size, bool decompressed) {
  std::string reason = decompressed ? "the decompressed data ends early (truncated after "
                                    : "the file ends early (truncated after ";
  reason += std::to_string(size);
  reason += " bytes): ";
  reason += what;
  reason +=
      "; the capture may have been cut off (stopped or copied before it was completely written)";
  return InputError(file, std::move(reason), offset);
}

}  // namespace jaxprof
