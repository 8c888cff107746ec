// The HloProto decoder's own parts (hlo_module_proto.cc, hlo_instruction_proto.cc,
// hlo_replica_groups.cc, and hlo_index.cc for frame ids; not for other callers): reading one field
// of an XLA message straight from the wire, and the decoders one message hands to another. Field
// numbers are those of XLA's public xla/service/hlo.proto and xla/xla_data.proto.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "jaxprof/common/error.h"
#include "jaxprof/model/hlo_index.h"
#include "jaxprof/wire/reader.h"

namespace jaxprof::hlo_proto {

[[noreturn]] inline void corrupt(int64_t offset, const std::string& why) {
  throw InputError("", "corrupt HloProto: " + why, offset);
}

inline int64_t offset_in(const wire::Reader& r, std::string_view v) { return r.offset_of(v); }

inline std::string_view read_string(const wire::Reader& r, const wire::Field& f, const char* what) {
  wire::expect_type(r, f, wire::WireType::kLen, what);
  return f.bytes;
}

inline uint64_t read_varint_field(const wire::Reader& r, const wire::Field& f, const char* what) {
  wire::expect_type(r, f, wire::WireType::kVarint, what);
  return f.value;
}

// Repeated integer fields arrive packed (proto3's default) or one per field (older writers);
// both must decode to the same list.
template <typename T>
void read_repeated_int(const wire::Reader& r, const wire::Field& f, std::vector<T>& out,
                       const char* what) {
  if (f.type == wire::WireType::kVarint) {
    out.push_back(static_cast<T>(f.value));
    return;
  }
  wire::expect_type(r, f, wire::WireType::kLen, what);
  const uint8_t* p = reinterpret_cast<const uint8_t*>(f.bytes.data());
  const uint8_t* end = p + f.bytes.size();
  while (p < end) out.push_back(static_cast<T>(wire::read_varint(p, end, r.origin())));
}

// 1-based lookup; a dangling id resolves to the empty value rather than failing the whole module,
// because the rest of the module is still useful.
template <typename T>
const T* at_1based(const std::vector<T>& v, int64_t id) {
  return id >= 1 && static_cast<uint64_t>(id) <= v.size() ? &v[id - 1] : nullptr;
}

// hlo_replica_groups.cc: a collective's groups in each of the forms XLA writes them.
// ReplicaGroup (the deprecated HloInstructionProto.replica_groups, and explicit device lists).
std::vector<int64_t> read_replica_group(std::string_view msg, const uint8_t* origin);
// CollectiveDeviceListProto: explicit groups, or an iota list expanded into groups.
void read_device_list(std::string_view msg, const uint8_t* origin,
                      std::vector<std::vector<int64_t>>& explicit_groups,
                      std::vector<std::vector<int64_t>>& iota_groups);
// MeshAxesReplicaGroupListProto, expanded into groups; empty when it is not self-consistent.
std::vector<std::vector<int64_t>> read_mesh_axes(std::string_view msg, const uint8_t* origin);

// hlo_instruction_proto.cc: one HloInstructionProto into `out`; dot, convolution and window
// details go into the module's side tables.
void read_instruction(std::string_view msg, const uint8_t* origin, HloModule& m,
                      HloInstruction& out);

}  // namespace jaxprof::hlo_proto
