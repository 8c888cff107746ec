#include "jaxprof/wire/reader.h"

#include <string>

namespace jaxprof::wire {

void fail(const uint8_t* origin, const uint8_t* at, const char* reason) {
  throw InputError("", std::string("corrupt protobuf: ") + reason, at - origin);
}

void expect_type(const Reader& r, const Field& f, WireType t, const char* what) {
  if (f.type == t) return;
  static const char* names[] = {"varint",    "fixed64", "length-delimited", "start-group",
                                "end-group", "fixed32", "invalid",          "invalid"};
  throw InputError("",
                   std::string("corrupt protobuf: ") + what + " has wire type " +
                       names[static_cast<int>(f.type) & 7] + ", expected " +
                       names[static_cast<int>(t) & 7],
                   r.field_offset());
}

}  // namespace jaxprof::wire
