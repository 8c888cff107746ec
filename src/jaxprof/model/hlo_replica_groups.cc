// A collective's replica groups, in each of the forms XLA writes them: explicit lists (the
// deprecated replica_groups field and CollectiveDeviceListProto), iota lists, and mesh axes. The
// compact forms are expanded into explicit lists of device ids.
#include <algorithm>
#include <utility>

#include "jaxprof/model/hlo_proto_decode.h"

namespace jaxprof::hlo_proto {
namespace {

using wire::Field;
using wire::Reader;

// Iota replica groups are expanded into explicit lists; a corrupt count must not allocate
// gigabytes.
constexpr int64_t kMaxIotaDevices = int64_t{1} << 22;

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

}  // namespace

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

}  // namespace jaxprof::hlo_proto
