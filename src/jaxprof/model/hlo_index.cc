// Decodes xla.HloProto / HloModuleProto straight from the wire (no libprotobuf). Only the fields
// the analyses use are read; everything else is skipped. Field numbers are those of XLA's public
// xla/service/hlo.proto and xla/xla_data.proto.
#include "jaxprof/model/hlo_index.h"

#include <algorithm>
#include <string>

#include "jaxprof/common/error.h"
#include "jaxprof/io/huge_pages.h"
#include "jaxprof/wire/reader.h"

namespace jaxprof {
namespace {

using wire::Field;
using wire::Reader;
using wire::WireType;

// A corrupt proto can nest tuple shapes as deep as its size allows; recursion must stay bounded.
constexpr int kMaxShapeDepth = 64;
// Iota replica groups are expanded into explicit lists; a corrupt count must not allocate
// gigabytes.
constexpr int64_t kMaxIotaDevices = int64_t{1} << 22;

// xla.PrimitiveType numbers (xla_data.proto).
enum PrimitiveType : int32_t {
  kPred = 1,
  kS8 = 2,
  kS16 = 3,
  kS32 = 4,
  kS64 = 5,
  kU8 = 6,
  kU16 = 7,
  kU32 = 8,
  kU64 = 9,
  kF16 = 10,
  kF32 = 11,
  kF64 = 12,
  kTuple = 13,
  kOpaque = 14,
  kC64 = 15,
  kBF16 = 16,
  kToken = 17,
  kC128 = 18,
  kF8E5M2 = 19,
  kF8E4M3FN = 20,
  kS4 = 21,
  kU4 = 22,
  kF8E4M3B11FNUZ = 23,
  kF8E5M2FNUZ = 24,
  kF8E4M3FNUZ = 25,
  kS2 = 26,
  kU2 = 27,
  kF8E4M3 = 28,
  kF8E3M4 = 29,
  kS1 = 30,
  kU1 = 31,
  kF4E2M1FN = 32,
  kF8E8M0FNU = 33,
  kBuffer = 34,
};

struct TypeInfo {
  const char* name;  // XLA's lowercase short name, as in HLO text
  int bits;          // storage bits per element; 0 for types without array storage
};

TypeInfo type_info(int32_t t) {
  switch (t) {
    case kPred:
      return {"pred", 8};
    case kS8:
      return {"s8", 8};
    case kS16:
      return {"s16", 16};
    case kS32:
      return {"s32", 32};
    case kS64:
      return {"s64", 64};
    case kU8:
      return {"u8", 8};
    case kU16:
      return {"u16", 16};
    case kU32:
      return {"u32", 32};
    case kU64:
      return {"u64", 64};
    case kF16:
      return {"f16", 16};
    case kF32:
      return {"f32", 32};
    case kF64:
      return {"f64", 64};
    case kTuple:
      return {"tuple", 0};
    case kOpaque:
      return {"opaque", 0};
    case kC64:
      return {"c64", 64};
    case kBF16:
      return {"bf16", 16};
    case kToken:
      return {"token", 0};
    case kC128:
      return {"c128", 128};
    case kF8E5M2:
      return {"f8e5m2", 8};
    case kF8E4M3FN:
      return {"f8e4m3fn", 8};
    case kS4:
      return {"s4", 4};
    case kU4:
      return {"u4", 4};
    case kF8E4M3B11FNUZ:
      return {"f8e4m3b11fnuz", 8};
    case kF8E5M2FNUZ:
      return {"f8e5m2fnuz", 8};
    case kF8E4M3FNUZ:
      return {"f8e4m3fnuz", 8};
    case kS2:
      return {"s2", 2};
    case kU2:
      return {"u2", 2};
    case kF8E4M3:
      return {"f8e4m3", 8};
    case kF8E3M4:
      return {"f8e3m4", 8};
    case kS1:
      return {"s1", 1};
    case kU1:
      return {"u1", 1};
    case kF4E2M1FN:
      return {"f4e2m1fn", 4};
    case kF8E8M0FNU:
      return {"f8e8m0fnu", 8};
    case kBuffer:
      return {"buffer", 0};
    default:
      return {nullptr, 0};
  }
}

uint64_t saturating_add(uint64_t a, uint64_t b) {
  uint64_t r;
  return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}

[[noreturn]] void corrupt(int64_t offset, const std::string& why) {
  throw InputError("", "corrupt HloProto: " + why, offset);
}

int64_t offset_in(const Reader& r, std::string_view v) { return r.offset_of(v); }

std::string_view read_string(const Reader& r, const Field& f, const char* what) {
  wire::expect_type(r, f, WireType::kLen, what);
  return f.bytes;
}

uint64_t read_varint_field(const Reader& r, const Field& f, const char* what) {
  wire::expect_type(r, f, WireType::kVarint, what);
  return f.value;
}

// Repeated integer fields arrive packed (proto3's default) or one per field (older writers);
// both must decode to the same list.
template <typename T>
void read_repeated_int(const Reader& r, const Field& f, std::vector<T>& out, const char* what) {
  if (f.type == WireType::kVarint) {
    out.push_back(static_cast<T>(f.value));
    return;
  }
  wire::expect_type(r, f, WireType::kLen, what);
  const uint8_t* p = reinterpret_cast<const uint8_t*>(f.bytes.data());
  const uint8_t* end = p + f.bytes.size();
  while (p < end) out.push_back(static_cast<T>(wire::read_varint(p, end, r.origin())));
}

// ShapeProto: element_type=2, dimensions=3, tuple_shapes=4 (layout=5 and the rest are skipped).
void read_shape(std::string_view msg, const uint8_t* origin, HloShape& out, int depth) {
  Reader r(msg, origin);
  if (depth > kMaxShapeDepth) corrupt(offset_in(r, msg), "shape nested too deeply");
  Field f;
  while (r.next(f)) {
    switch (f.number) {
      case 2:
        out.element_type = static_cast<int32_t>(read_varint_field(r, f, "ShapeProto.element_type"));
        break;
      case 3:
        read_repeated_int(r, f, out.dimensions, "ShapeProto.dimensions");
        break;
      case 4: {
        std::string_view sub = read_string(r, f, "ShapeProto.tuple_shapes");
        out.tuple_shapes.emplace_back();
        read_shape(sub, origin, out.tuple_shapes.back(), depth + 1);
        break;
      }
      default:
        break;
    }
  }
}

// OpMetadata: op_type=1, op_name=2, source_file=3, source_line=4, stack_frame_id=15.
void read_metadata(std::string_view msg, const uint8_t* origin, HloInstruction& out) {
  Reader r(msg, origin);
  Field f;
  while (r.next(f)) {
    switch (f.number) {
      case 1:
        out.op_type = read_string(r, f, "OpMetadata.op_type");
        break;
      case 2:
        out.op_name = read_string(r, f, "OpMetadata.op_name");
        break;
      case 3:
        out.source_file = read_string(r, f, "OpMetadata.source_file");
        break;
      case 4:
        out.source_line = static_cast<int32_t>(read_varint_field(r, f, "OpMetadata.source_line"));
        break;
      case 15:
        out.stack_frame_id =
            static_cast<int32_t>(read_varint_field(r, f, "OpMetadata.stack_frame_id"));
        break;
      default:
        break;
    }
  }
}

// ReplicaGroup: replica_ids=1.
std::vector<int64_t> read_replica_group(std::string_view msg, const uint8_t* origin) {
  std::vector<int64_t> ids;
  Reader r(msg, origin);
  Field f;
  while (r.next(f)) {
    if (f.number == 1) read_repeated_int(r, f, ids, "ReplicaGroup.replica_ids");
  }
  return ids;
}

struct IotaList {
  int64_t num_groups = 0;
  int64_t group_size = 0;
  std::vector<int64_t> reshape_dims;
  std::vector<int64_t> transpose_perm;
};

// IotaReplicaGroupListProto: num_replica_groups=1, num_devices_per_group=2, iota_reshape_dims=3,
// iota_transpose_perm=4.
IotaList read_iota(std::string_view msg, const uint8_t* origin) {
  IotaList out;
  Reader r(msg, origin);
  Field f;
  while (r.next(f)) {
    switch (f.number) {
      case 1:
        out.num_groups = static_cast<int64_t>(read_varint_field(r, f, "IotaReplicaGroupList.num"));
        break;
      case 2:
        out.group_size = static_cast<int64_t>(read_varint_field(r, f, "IotaReplicaGroupList.size"));
        break;
      case 3:
        read_repeated_int(r, f, out.reshape_dims, "IotaReplicaGroupList.iota_reshape_dims");
        break;
      case 4:
        read_repeated_int(r, f, out.transpose_perm, "IotaReplicaGroupList.iota_transpose_perm");
        break;
      default:
        break;
    }
  }
  return out;
}

// XLA's iota device list: fill an array of shape reshape_dims with 0..N-1, transpose it by
// transpose_perm (output dim i is input dim perm[i]), read it back row-major and cut it into
// num_groups groups of group_size. Returns nothing for lists that are not self-consistent.
std::vector<std::vector<int64_t>> expand_iota(const IotaList& iota) {
  if (iota.num_groups <= 0 || iota.group_size <= 0) return {};
  if (iota.num_groups > kMaxIotaDevices / iota.group_size) return {};
  const int64_t total = iota.num_groups * iota.group_size;

  std::vector<int64_t> dims = iota.reshape_dims;
  if (dims.empty()) dims.push_back(total);
  int64_t product = 1;
  for (int64_t d : dims) {
    if (d <= 0 || d > total || product > total / d) return {};
    product *= d;
  }
  if (product != total) return {};

  const size_t rank = dims.size();
  std::vector<int64_t> perm = iota.transpose_perm;
  if (perm.empty()) {
    for (size_t i = 0; i < rank; ++i) perm.push_back(static_cast<int64_t>(i));
  }
  if (perm.size() != rank) return {};
  std::vector<bool> seen(rank, false);
  for (int64_t p : perm) {
    if (p < 0 || static_cast<size_t>(p) >= rank || seen[p]) return {};
    seen[p] = true;
  }

  // Row-major strides of the source (reshaped iota) array; the value at a source index is its
  // linear offset, so the transposed array's element is the dot product with these strides.
  std::vector<int64_t> src_stride(rank);
  int64_t s = 1;
  for (size_t i = rank; i-- > 0;) {
    src_stride[i] = s;
    s *= dims[i];
  }
  std::vector<int64_t> out_dims(rank), out_stride(rank);
  for (size_t i = 0; i < rank; ++i) {
    out_dims[i] = dims[perm[i]];
    out_stride[i] = src_stride[perm[i]];
  }

  std::vector<std::vector<int64_t>> groups(iota.num_groups);
  std::vector<int64_t> idx(rank, 0);  // odometer over the transposed array, row-major
  int64_t value = 0;
  for (int64_t n = 0; n < total; ++n) {
    groups[n / iota.group_size].push_back(value);
    for (size_t i = rank; i-- > 0;) {
      if (++idx[i] < out_dims[i]) {
        value += out_stride[i];
        break;
      }
      value -= (out_dims[i] - 1) * out_stride[i];
      idx[i] = 0;
    }
  }
  return groups;
}

// CollectiveDeviceListProto: replica_groups=1, iota_replica_group_list=2.
void read_device_list(std::string_view msg, const uint8_t* origin,
                      std::vector<std::vector<int64_t>>& explicit_groups,
                      std::vector<std::vector<int64_t>>& iota_groups) {
  Reader r(msg, origin);
  Field f;
  while (r.next(f)) {
    if (f.number == 1) {
      explicit_groups.push_back(
          read_replica_group(read_string(r, f, "CollectiveDeviceList.replica_groups"), origin));
    } else if (f.number == 2) {
      iota_groups = expand_iota(
          read_iota(read_string(r, f, "CollectiveDeviceList.iota_replica_group_list"), origin));
    }
  }
}

// MeshAxesReplicaGroupListProto (mesh=1, axes=2): the groups are the devices that differ only in
// the listed mesh axes. MeshProto: axes=1 (name=1, size=2), device_ids=2, iota_transform=3
// (reshape_dims=1, transpose_perm=2). AxisRefProto: mesh_axis_index=1, sub_axis_info=2 (pre_size=1,
// size=2; a sub-axis is the factor of its axis after the `pre_size` more major ones).
std::vector<std::vector<int64_t>> read_mesh_axes(std::string_view msg, const uint8_t* origin) {
  std::vector<int64_t> axis_sizes, device_ids;
  IotaList device_iota;
  bool has_iota = false;
  struct Ref {
    int64_t axis = 0, pre = 0, size = 0;  // size 0: the whole axis
  };
  std::vector<Ref> refs;
  Reader r(msg, origin);
  Field f;
  while (r.next(f)) {
    if (f.number == 1) {
      Reader mr(read_string(r, f, "MeshAxesReplicaGroupList.mesh"), origin);
      Field mf;
      while (mr.next(mf)) {
        if (mf.number == 1) {
          int64_t size = 0;
          Reader ar(read_string(mr, mf, "MeshProto.axes"), origin);
          Field af;
          while (ar.next(af))
            if (af.number == 2) size = static_cast<int64_t>(read_varint_field(ar, af, "MeshAxis"));
          axis_sizes.push_back(size);
        } else if (mf.number == 2) {
          read_repeated_int(mr, mf, device_ids, "MeshProto.device_ids");
        } else if (mf.number == 3) {
          has_iota = true;
          Reader ir(read_string(mr, mf, "MeshProto.iota_transform"), origin);
          Field itf;
          while (ir.next(itf)) {
            if (itf.number == 1) read_repeated_int(ir, itf, device_iota.reshape_dims, "Iota");
            if (itf.number == 2) read_repeated_int(ir, itf, device_iota.transpose_perm, "Iota");
          }
        }
      }
    } else if (f.number == 2) {
      Ref ref;
      Reader ar(read_string(r, f, "MeshAxesReplicaGroupList.axes"), origin);
      Field af;
      while (ar.next(af)) {
        if (af.number == 1) {
          ref.axis = static_cast<int64_t>(read_varint_field(ar, af, "AxisRef.mesh_axis_index"));
        } else if (af.number == 2) {
          Reader sr(read_string(ar, af, "AxisRef.sub_axis_info"), origin);
          Field sf;
          while (sr.next(sf)) {
            if (sf.number == 1) ref.pre = static_cast<int64_t>(read_varint_field(sr, sf, "pre"));
            if (sf.number == 2) ref.size = static_cast<int64_t>(read_varint_field(sr, sf, "size"));
          }
        }
      }
      refs.push_back(ref);
    }
  }
  int64_t total = 1;
  for (int64_t s : axis_sizes) {
    if (s <= 0 || total > kMaxIotaDevices / s) return {};
    total *= s;
  }
  if (axis_sizes.empty() || refs.empty()) return {};
  // Cut each axis into factors at the sub-axis boundaries, major to minor.
  std::vector<std::vector<int64_t>> bounds(axis_sizes.size());
  for (size_t a = 0; a < axis_sizes.size(); ++a) bounds[a] = {1, axis_sizes[a]};
  for (const Ref& ref : refs) {
    if (ref.axis < 0 || static_cast<size_t>(ref.axis) >= axis_sizes.size()) return {};
    if (ref.size == 0) continue;
    if (ref.pre <= 0 || ref.size <= 0 || axis_sizes[ref.axis] % (ref.pre * ref.size) != 0)
      return {};
    bounds[ref.axis].push_back(ref.pre);
    bounds[ref.axis].push_back(ref.pre * ref.size);
  }
  std::vector<int64_t> dims;
  std::vector<std::vector<std::pair<int64_t, size_t>>> factor_of(axis_sizes.size());  // (lo, dim)
  for (size_t a = 0; a < axis_sizes.size(); ++a) {
    std::vector<int64_t>& b = bounds[a];
    std::sort(b.begin(), b.end());
    b.erase(std::unique(b.begin(), b.end()), b.end());
    for (size_t k = 0; k + 1 < b.size(); ++k) {
      if (b[k + 1] % b[k] != 0) return {};
      factor_of[a].push_back({b[k], dims.size()});
      dims.push_back(b[k + 1] / b[k]);
    }
  }
  std::vector<int64_t> grouped;
  std::vector<bool> used(dims.size(), false);
  for (const Ref& ref : refs) {
    int64_t lo = ref.size == 0 ? 1 : ref.pre;
    int64_t hi = ref.size == 0 ? axis_sizes[ref.axis] : ref.pre * ref.size;
    for (auto [start, d] : factor_of[ref.axis]) {
      if (start < lo || start >= hi) continue;
      if (used[d]) return {};
      used[d] = true;
      grouped.push_back(static_cast<int64_t>(d));
    }
  }
  IotaList groups_iota;
  groups_iota.reshape_dims = dims;
  int64_t group_size = 1;
  for (size_t d = 0; d < dims.size(); ++d)
    if (!used[d]) groups_iota.transpose_perm.push_back(static_cast<int64_t>(d));
  for (int64_t d : grouped) {
    groups_iota.transpose_perm.push_back(d);
    group_size *= dims[d];
  }
  groups_iota.group_size = group_size;
  groups_iota.num_groups = total / group_size;
  std::vector<std::vector<int64_t>> groups = expand_iota(groups_iota);
  // Positions in the mesh name devices through device_ids or the mesh's own iota transform.
  std::vector<int64_t> devices = device_ids;
  if (devices.empty() && has_iota) {
    device_iota.num_groups = 1;
    device_iota.group_size = total;
    std::vector<std::vector<int64_t>> flat = expand_iota(device_iota);
    if (flat.size() != 1) return {};
    devices = std::move(flat[0]);
  }
  if (!devices.empty()) {
    if (static_cast<int64_t>(devices.size()) != total) return {};
    for (auto& g : groups)
      for (int64_t& v : g) v = devices[v];
  }
  return groups;
}

// DotDimensionNumbers: lhs_contracting_dimensions=1, rhs_contracting_dimensions=2,
// lhs_batch_dimensions=3, rhs_batch_dimensions=4.
void read_dot_dimensions(std::string_view msg, const uint8_t* origin, HloDotDimensions& out) {
  Reader r(msg, origin);
  Field f;
  while (r.next(f)) {
    switch (f.number) {
      case 1:
        read_repeated_int(r, f, out.lhs_contracting, "DotDimensionNumbers.lhs_contracting");
        break;
      case 2:
        read_repeated_int(r, f, out.rhs_contracting, "DotDimensionNumbers.rhs_contracting");
        break;
      case 3:
        read_repeated_int(r, f, out.lhs_batch, "DotDimensionNumbers.lhs_batch");
        break;
      case 4:
        read_repeated_int(r, f, out.rhs_batch, "DotDimensionNumbers.rhs_batch");
        break;
      default:
        break;
    }
  }
}

// ConvolutionDimensionNumbers: input_batch_dimension=7, input_feature_dimension=8,
// input_spatial_dimensions=11, kernel_input_feature_dimension=3,
// kernel_output_feature_dimension=4, kernel_spatial_dimensions=6, output_batch_dimension=9,
// output_feature_dimension=10, output_spatial_dimensions=12.
void read_convolution_dimensions(std::string_view msg, const uint8_t* origin,
                                 HloConvolutionDimensions& out) {
  Reader r(msg, origin);
  Field f;
  auto scalar = [&](int64_t& dst) {
    dst = static_cast<int64_t>(read_varint_field(r, f, "ConvolutionDimensionNumbers field"));
  };
  while (r.next(f)) {
    switch (f.number) {
      case 3:
        scalar(out.kernel_input_feature);
        break;
      case 4:
        scalar(out.kernel_output_feature);
        break;
      case 6:
        read_repeated_int(r, f, out.kernel_spatial, "ConvolutionDimensionNumbers.kernel_spatial");
        break;
      case 7:
        scalar(out.input_batch);
        break;
      case 8:
        scalar(out.input_feature);
        break;
      case 9:
        scalar(out.output_batch);
        break;
      case 10:
        scalar(out.output_feature);
        break;
      case 11:
        read_repeated_int(r, f, out.input_spatial, "ConvolutionDimensionNumbers.input_spatial");
        break;
      case 12:
        read_repeated_int(r, f, out.output_spatial, "ConvolutionDimensionNumbers.output_spatial");
        break;
      default:
        break;
    }
  }
}

// Window: dimensions=1, each WindowDimension{size=1, stride=2, padding_low=3, padding_high=4,
// window_dilation=5, base_dilation=6} (window_reversal=7 does not change costs). Zero strides
// and dilations are proto3's unset value: XLA treats them as 1.
void read_window(std::string_view msg, const uint8_t* origin,
                 std::vector<HloWindowDimension>& out) {
  Reader r(msg, origin);
  Field f;
  while (r.next(f)) {
    if (f.number != 1) continue;
    HloWindowDimension& d = out.emplace_back();
    d.size = 0;
    Reader dr(read_string(r, f, "Window.dimensions"), origin);
    Field g;
    while (dr.next(g)) {
      if (g.number < 1 || g.number > 6) continue;
      const auto v = static_cast<int64_t>(read_varint_field(dr, g, "WindowDimension field"));
      switch (g.number) {
        case 1:
          d.size = v;
          break;
        case 2:
          d.stride = v;
          break;
        case 3:
          d.padding_low = v;
          break;
        case 4:
          d.padding_high = v;
          break;
        case 5:
          d.window_dilation = v;
          break;
        case 6:
          d.base_dilation = v;
          break;
      }
    }
    if (d.stride == 0) d.stride = 1;
    if (d.window_dilation == 0) d.window_dilation = 1;
    if (d.base_dilation == 0) d.base_dilation = 1;
  }
}

// PrecisionConfig: operand_precision=1 (repeated enum DEFAULT=0, HIGH=1, HIGHEST=2).
uint8_t read_operand_precision(std::string_view msg, const uint8_t* origin) {
  std::vector<int64_t> precisions;
  Reader r(msg, origin);
  Field f;
  while (r.next(f))
    if (f.number == 1) read_repeated_int(r, f, precisions, "PrecisionConfig.operand_precision");
  int64_t highest = 0;
  for (int64_t p : precisions) highest = std::max(highest, p);
  return static_cast<uint8_t>(std::clamp<int64_t>(highest, 0, 2));
}

// HloInstructionProto: name=1, opcode=2, shape=3, metadata=7, parameter_number=9,
// fusion_kind=11, window=15, convolution_dimension_numbers=16, custom_call_target=28,
// dot_dimension_numbers=30, id=35, operand_ids=36, called_computation_ids=38,
// backend_config=43, replica_groups=49 (deprecated form), feature_group_count=50,
// precision_config=51, batch_group_count=58, collective_device_list=87,
// mesh_axes_replica_group_list=93.
void read_instruction(std::string_view msg, const uint8_t* origin, HloModule& m,
                      HloInstruction& out) {
  std::vector<std::vector<int64_t>> legacy_groups, explicit_groups, iota_groups, mesh_groups;
  Reader r(msg, origin);
  Field f;
  while (r.next(f)) {
    switch (f.number) {
      case 1:
        out.name = read_string(r, f, "HloInstructionProto.name");
        break;
      case 2:
        out.opcode = read_string(r, f, "HloInstructionProto.opcode");
        break;
      case 3:
        read_shape(read_string(r, f, "HloInstructionProto.shape"), origin, out.shape, 0);
        break;
      case 7:
        read_metadata(read_string(r, f, "HloInstructionProto.metadata"), origin, out);
        break;
      case 9:
        out.parameter_number =
            static_cast<int32_t>(read_varint_field(r, f, "HloInstructionProto.parameter_number"));
        break;
      case 11:
        out.fusion_kind = read_string(r, f, "HloInstructionProto.fusion_kind");
        break;
      case 15:
        if (out.window < 0) {
          out.window = static_cast<int32_t>(m.windows.size());
          m.windows.emplace_back();
        }
        read_window(read_string(r, f, "HloInstructionProto.window"), origin, m.windows[out.window]);
        break;
      case 16:
        if (out.convolution < 0) {
          out.convolution = static_cast<int32_t>(m.convolutions.size());
          m.convolutions.emplace_back();
        }
        read_convolution_dimensions(
            read_string(r, f, "HloInstructionProto.convolution_dimension_numbers"), origin,
            m.convolutions[out.convolution]);
        break;
      case 28:
        out.custom_call_target = read_string(r, f, "HloInstructionProto.custom_call_target");
        break;
      case 30:
        if (out.dot < 0) {
          out.dot = static_cast<int32_t>(m.dots.size());
          m.dots.emplace_back();
        }
        read_dot_dimensions(read_string(r, f, "HloInstructionProto.dot_dimension_numbers"), origin,
                            m.dots[out.dot]);
        break;
      case 43:
        out.backend_config = read_string(r, f, "HloInstructionProto.backend_config");
        break;
      case 50:
        out.feature_group_count = static_cast<int32_t>(
            read_varint_field(r, f, "HloInstructionProto.feature_group_count"));
        break;
      case 51:
        out.operand_precision = read_operand_precision(
            read_string(r, f, "HloInstructionProto.precision_config"), origin);
        break;
      case 58:
        out.batch_group_count =
            static_cast<int32_t>(read_varint_field(r, f, "HloInstructionProto.batch_group_count"));
        break;
      case 35:
        out.id = static_cast<int64_t>(read_varint_field(r, f, "HloInstructionProto.id"));
        break;
      case 36:
        read_repeated_int(r, f, out.operand_ids, "HloInstructionProto.operand_ids");
        break;
      case 38:
        read_repeated_int(r, f, out.called_computation_ids,
                          "HloInstructionProto.called_computation_ids");
        break;
      case 49:
        legacy_groups.push_back(
            read_replica_group(read_string(r, f, "HloInstructionProto.replica_groups"), origin));
        break;
      case 87:
        read_device_list(read_string(r, f, "HloInstructionProto.collective_device_list"), origin,
                         explicit_groups, iota_groups);
        break;
      case 93:
        mesh_groups = read_mesh_axes(
            read_string(r, f, "HloInstructionProto.mesh_axes_replica_group_list"), origin);
        break;
      default:
        break;
    }
  }
  // Newer XLA writes collective_device_list (explicit or iota); older writes replica_groups. When
  // both are present they describe the same groups, so prefer the newer field.
  if (!explicit_groups.empty()) {
    out.replica_groups = std::move(explicit_groups);
  } else if (!iota_groups.empty()) {
    out.replica_groups = std::move(iota_groups);
  } else if (!mesh_groups.empty()) {
    out.replica_groups = std::move(mesh_groups);
  } else {
    out.replica_groups = std::move(legacy_groups);
  }
}

// HloComputationProto: name=1, instructions=2, id=5, root_id=6, is_fusion_computation=7.
void read_computation(std::string_view msg, const uint8_t* origin, HloModule& m) {
  HloComputation comp;
  const auto comp_index = static_cast<uint32_t>(m.computations.size());
  Reader r(msg, origin);
  Field f;
  while (r.next(f)) {
    switch (f.number) {
      case 1:
        comp.name = read_string(r, f, "HloComputationProto.name");
        break;
      case 2: {
        std::string_view sub = read_string(r, f, "HloComputationProto.instructions");
        comp.instructions.push_back(static_cast<uint32_t>(m.instructions.size()));
        HloInstruction& instr = m.instructions.emplace_back();
        instr.computation = comp_index;
        read_instruction(sub, origin, m, instr);
        break;
      }
      case 5:
        comp.id = static_cast<int64_t>(read_varint_field(r, f, "HloComputationProto.id"));
        break;
      case 6:
        comp.root_id = static_cast<int64_t>(read_varint_field(r, f, "HloComputationProto.root_id"));
        break;
      case 7:
        comp.is_fusion = read_varint_field(r, f, "HloComputationProto.is_fusion_computation") != 0;
        break;
      default:
        break;
    }
  }
  m.computations.push_back(std::move(comp));
}

// StackFrameIndexProto, kept flat until the whole module is read (its arrays may arrive in any
// order, even split over several occurrences of the field).
struct FrameIndex {
  struct Location {
    int32_t file = 0, function = 0, line = 0, column = 0;
  };
  struct Frame {
    int32_t location = 0, parent = 0;
  };
  std::vector<std::string_view> files, functions;
  std::vector<Location> locations;
  std::vector<Frame> frames;
};

// file_names=1, function_names=2, file_locations=3 (file_name_id=1, function_name_id=2, line=3,
// column=4), stack_frames=4 (file_location_id=1, parent_frame_id=2).
void read_frame_index(std::string_view msg, const uint8_t* origin, FrameIndex& out) {
  Reader r(msg, origin);
  Field f;
  while (r.next(f)) {
    switch (f.number) {
      case 1:
        out.files.push_back(read_string(r, f, "StackFrameIndex.file_names"));
        break;
      case 2:
        out.functions.push_back(read_string(r, f, "StackFrameIndex.function_names"));
        break;
      case 3: {
        Reader sub(read_string(r, f, "StackFrameIndex.file_locations"), origin);
        FrameIndex::Location& loc = out.locations.emplace_back();
        Field g;
        while (sub.next(g)) {
          int32_t* dst = g.number == 1   ? &loc.file
                         : g.number == 2 ? &loc.function
                         : g.number == 3 ? &loc.line
                         : g.number == 4 ? &loc.column
                                         : nullptr;
          if (dst) *dst = static_cast<int32_t>(read_varint_field(sub, g, "FileLocation field"));
        }
        break;
      }
      case 4: {
        Reader sub(read_string(r, f, "StackFrameIndex.stack_frames"), origin);
        FrameIndex::Frame& frame = out.frames.emplace_back();
        Field g;
        while (sub.next(g)) {
          if (g.number == 1) {
            frame.location = static_cast<int32_t>(read_varint_field(sub, g, "StackFrame field"));
          } else if (g.number == 2) {
            frame.parent = static_cast<int32_t>(read_varint_field(sub, g, "StackFrame field"));
          }
        }
        break;
      }
      default:
        break;
    }
  }
}

// 1-based lookup; a dangling id resolves to the empty value rather than failing the whole module,
// because the rest of the module is still useful.
template <typename T>
const T* at_1based(const std::vector<T>& v, int64_t id) {
  return id >= 1 && static_cast<uint64_t>(id) <= v.size() ? &v[id - 1] : nullptr;
}

void resolve_frames(const FrameIndex& idx, HloModule& m) {
  m.stack_frames.reserve(idx.frames.size());
  for (const FrameIndex::Frame& fr : idx.frames) {
    HloStackFrame& out = m.stack_frames.emplace_back();
    if (at_1based(idx.frames, fr.parent)) out.parent = fr.parent;
    const FrameIndex::Location* loc = at_1based(idx.locations, fr.location);
    if (!loc) continue;
    if (const auto* file = at_1based(idx.files, loc->file)) out.file = *file;
    if (const auto* fn = at_1based(idx.functions, loc->function)) out.function = *fn;
    out.line = loc->line;
    out.column = loc->column;
  }
}

// HloModuleProto: name=1, computations=3, id=5, entry_computation_id=6, stack_frame_index=17.
// Called once per occurrence of the message, so repeated occurrences merge as protobuf's would.
void read_module(std::string_view msg, const uint8_t* origin, HloModule& m, FrameIndex& frames) {
  // Counting computations and instructions first (a walk over two levels of field headers) lets
  // their vectors be allocated once: growing them would move every instruction several times.
  size_t computations = 0, instructions = 0;
  {
    Reader r(msg, origin);
    Field f;
    while (r.next(f)) {
      if (f.number != 3) continue;
      ++computations;
      Reader c(read_string(r, f, "HloModuleProto.computations"), origin);
      Field g;
      while (c.next(g)) instructions += g.number == 2;
    }
  }
  m.computations.reserve(m.computations.size() + computations);
  m.instructions.reserve(m.instructions.size() + instructions);
  advise_huge_pages(m.instructions.data(), m.instructions.capacity() * sizeof(HloInstruction));
  Reader r(msg, origin);
  Field f;
  while (r.next(f)) {
    switch (f.number) {
      case 1:
        m.name = read_string(r, f, "HloModuleProto.name");
        break;
      case 3:
        read_computation(read_string(r, f, "HloModuleProto.computations"), origin, m);
        break;
      case 5:
        m.module_id = static_cast<int64_t>(read_varint_field(r, f, "HloModuleProto.id"));
        break;
      case 6:
        m.entry_computation_id =
            static_cast<int64_t>(read_varint_field(r, f, "HloModuleProto.entry_computation_id"));
        break;
      case 17:
        read_frame_index(read_string(r, f, "HloModuleProto.stack_frame_index"), origin, frames);
        break;
      default:
        break;
    }
  }
}

void finish_module(const FrameIndex& frames, HloModule& m) {
  // Every compiled module has at least its entry computation; bytes that parse as protobuf but
  // carry none are not an HLO module (most likely garbage).
  if (m.computations.empty()) corrupt(-1, "HloModuleProto has no computations");
  resolve_frames(frames, m);

  m.instruction_by_name.reserve(m.instructions.size());
  m.instruction_by_id.reserve(m.instructions.size());
  for (uint32_t i = 0; i < m.instructions.size(); ++i) {
    // emplace keeps the first on duplicates (XLA names and ids are unique within a module).
    m.instruction_by_name.emplace(m.instructions[i].name, i);
    m.instruction_by_id.emplace(m.instructions[i].id, i);
  }
  m.computation_by_id.reserve(m.computations.size());
  for (uint32_t i = 0; i < m.computations.size(); ++i) {
    HloComputation& comp = m.computations[i];
    m.computation_by_id.emplace(comp.id, i);
    // The root must be one of the computation's own instructions; XLA writes the last
    // instruction as the root when root_id is unset (old protos).
    for (uint32_t idx : comp.instructions)
      if (m.instructions[idx].id == comp.root_id) comp.root = idx;
    if (comp.root == UINT32_MAX && comp.root_id == 0 && !comp.instructions.empty())
      comp.root = comp.instructions.back();
  }
}

}  // namespace

const char* primitive_type_name(int32_t element_type) { return type_info(element_type).name; }

uint64_t HloShape::element_count() const {
  if (type_info(element_type).bits == 0) return 0;
  uint64_t elements = 1;
  for (int64_t d : dimensions) {
    if (d <= 0) return 0;
    if (__builtin_mul_overflow(elements, static_cast<uint64_t>(d), &elements)) return UINT64_MAX;
  }
  return elements;
}

uint64_t HloShape::byte_size() const {
  if (element_type == kTuple || element_type == kBuffer) {
    uint64_t sum = 0;
    for (const HloShape& s : tuple_shapes) sum = saturating_add(sum, s.byte_size());
    return sum;
  }
  const int bits = type_info(element_type).bits;
  if (bits == 0) return 0;
  uint64_t elements = 1;
  for (int64_t d : dimensions) {
    if (d <= 0) return 0;  // 0 is a valid (empty) dimension; negative only in corrupt input
    if (__builtin_mul_overflow(elements, static_cast<uint64_t>(d), &elements)) return UINT64_MAX;
  }
  uint64_t bytes;
  if (bits % 8 == 0) {
    if (__builtin_mul_overflow(elements, static_cast<uint64_t>(bits / 8), &bytes))
      return UINT64_MAX;
    return bytes;
  }
  // Sub-byte types are packed; an array rounds up to whole bytes.
  uint64_t total_bits;
  if (__builtin_mul_overflow(elements, static_cast<uint64_t>(bits), &total_bits)) return UINT64_MAX;
  return total_bits / 8 + (total_bits % 8 != 0);
}

std::string HloShape::to_string() const {
  std::string out;
  if (element_type == kTuple || element_type == kBuffer) {
    out += element_type == kBuffer ? "b(" : "(";
    for (size_t i = 0; i < tuple_shapes.size(); ++i) {
      if (i) out += ", ";
      out += tuple_shapes[i].to_string();
    }
    out += ')';
    return out;
  }
  const char* name = type_info(element_type).name;
  if (name) {
    out += name;
  } else {
    out += "type" + std::to_string(element_type);
  }
  out += '[';
  for (size_t i = 0; i < dimensions.size(); ++i) {
    if (i) out += ',';
    out += std::to_string(dimensions[i]);
  }
  out += ']';
  return out;
}

const HloInstruction* HloModule::find(std::string_view instruction_name) const {
  auto it = instruction_by_name.find(instruction_name);
  return it == instruction_by_name.end() ? nullptr : &instructions[it->second];
}

std::string HloModule::source_line(const HloInstruction& instr) const {
  std::string_view file = instr.source_file;
  int32_t line = instr.source_line;
  // Some producers leave source_file empty and only set the frame; its innermost frame is the same
  // place.
  if (file.empty()) {
    if (const HloStackFrame* frame = at_1based(stack_frames, instr.stack_frame_id)) {
      file = frame->file;
      line = frame->line;
    }
  }
  if (file.empty()) return {};
  std::string out(file);
  out += ':';
  out += std::to_string(line);
  return out;
}

const HloInstruction* HloModule::operand(const HloInstruction& instr, size_t i) const {
  if (i >= instr.operand_ids.size()) return nullptr;
  auto it = instruction_by_id.find(instr.operand_ids[i]);
  return it == instruction_by_id.end() ? nullptr : &instructions[it->second];
}

const HloComputation* HloModule::called(const HloInstruction& instr, size_t i) const {
  if (i >= instr.called_computation_ids.size()) return nullptr;
  auto it = computation_by_id.find(instr.called_computation_ids[i]);
  return it == computation_by_id.end() ? nullptr : &computations[it->second];
}

const HloInstruction* HloModule::root(const HloComputation& comp) const {
  return comp.root < instructions.size() ? &instructions[comp.root] : nullptr;
}

std::vector<const HloStackFrame*> HloModule::stack(const HloInstruction& instr) const {
  std::vector<const HloStackFrame*> out;
  int64_t id = instr.stack_frame_id;
  // A corrupt index can loop; no real chain is longer than the number of frames.
  while (const HloStackFrame* frame = at_1based(stack_frames, id)) {
    if (out.size() >= stack_frames.size()) break;
    out.push_back(frame);
    id = frame->parent;
  }
  return out;
}

const HloModule& HloIndex::add(std::string_view serialized, int64_t program_id, bool bare_module) {
  if (program_id != kUnknownProgramId) {
    // Multi-host profiles repeat the same program's proto; one copy is enough.
    auto it = by_program_id_.find(program_id);
    if (it != by_program_id_.end()) return *it->second;
  }
  return insert(parse(serialized, bare_module), program_id);
}

std::unique_ptr<HloModule> HloIndex::parse(std::string_view serialized, bool bare_module) {
  auto module = std::make_unique<HloModule>();
  FrameIndex frames;
  const auto* origin = reinterpret_cast<const uint8_t*>(serialized.data());
  if (bare_module) {
    read_module(serialized, origin, *module, frames);
  } else {
    // HloProto: hlo_module=1, buffer_assignment=3 (kept undecoded for the memory analysis).
    Reader r(serialized, origin);
    Field f;
    bool found = false;
    while (r.next(f)) {
      if (f.number == 3 && f.type == WireType::kLen) module->buffer_assignment = f.bytes;
      if (f.number != 1) continue;
      read_module(read_string(r, f, "HloProto.hlo_module"), origin, *module, frames);
      found = true;
    }
    if (!found) corrupt(-1, "HloProto has no hlo_module");
  }
  finish_module(frames, *module);
  module->serialized = serialized;
  module->bare_module = bare_module;
  return module;
}

const HloModule& HloIndex::insert(std::unique_ptr<HloModule> module, int64_t program_id) {
  if (program_id != kUnknownProgramId) {
    auto it = by_program_id_.find(program_id);
    if (it != by_program_id_.end()) return *it->second;
  }
  module->program_id = program_id;
  const HloModule* m = module.get();
  modules_.push_back(std::move(module));
  if (program_id != kUnknownProgramId) by_program_id_.emplace(program_id, m);
  by_name_.emplace(m->name, m);
  return *m;
}

const HloModule* HloIndex::find(int64_t program_id, std::string_view module_name) const {
  if (program_id != kUnknownProgramId) {
    auto it = by_program_id_.find(program_id);
    if (it != by_program_id_.end()) return it->second;
  }
  if (module_name.empty()) return nullptr;
  auto [first, last] = by_name_.equal_range(module_name);
  if (first == last || std::next(first) != last) return nullptr;  // unknown or ambiguous
  // A module indexed under another program id is another program of that name: its
  // instructions must not describe this one's.
  if (program_id != kUnknownProgramId && first->second->program_id != kUnknownProgramId)
    return nullptr;
  return first->second;
}

}  // namespace jaxprof
