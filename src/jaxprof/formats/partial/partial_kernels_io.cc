// A host's GPU kernels (partial.proto Kernels): per device, each kernel with its configurations
// and ops; each writer followed by its reader.
#include <string>

#include "jaxprof/formats/partial/partial_io.h"

namespace jaxprof::partial_io {

namespace {

Writer write_config(const PartialKernelConfig& c) {
  Writer z;
  z.varint(1, c.details);
  z.varint(2, c.count);
  z.int64(3, c.total_ps);
  return z;
}

void read_config(const Decoder& in, std::string_view msg, PartialKernelConfig& c) {
  in.each(msg, [&](const wire::Field& z) {
    if (z.number == 1) c.details = static_cast<uint32_t>(z.value);
    if (z.number == 2) c.count = z.value;
    if (z.number == 3) c.total_ps = z.as_int64();
  });
}

Writer write_kernel_op(const PartialKernelOp& op) {
  Writer z;
  z.varint(1, op.module);
  z.varint(2, op.hlo_op);
  z.int64(3, op.total_ps);
  z.varint(4, op.first);
  z.varint(5, op.op_name);
  return z;
}

void read_kernel_op(const Decoder& in, std::string_view msg, PartialKernelOp& op) {
  in.each(msg, [&](const wire::Field& z) {
    if (z.number == 1) op.module = static_cast<uint32_t>(z.value);
    if (z.number == 2) op.hlo_op = static_cast<uint32_t>(z.value);
    if (z.number == 3) op.total_ps = z.as_int64();
    if (z.number == 4) op.first = z.value;
    if (z.number == 5) op.op_name = static_cast<uint32_t>(z.value);
  });
}

Writer write_kernel(const PartialKernel& kn) {
  Writer y;
  y.varint(1, kn.name);
  y.varint(2, kn.display);
  y.varint(3, kn.count);
  y.int64(4, kn.total_ps);
  y.sint64(5, kn.min_ps);
  y.sint64(6, kn.max_ps);
  for (const PartialKernelConfig& c : kn.configs) y.message(7, write_config(c));
  for (const PartialKernelOp& op : kn.ops) y.message(8, write_kernel_op(op));
  return y;
}

void read_kernel(const Decoder& in, std::string_view msg, PartialKernel& kn) {
  in.each(msg, [&](const wire::Field& y) {
    switch (y.number) {
      case 1:
        kn.name = static_cast<uint32_t>(y.value);
        break;
      case 2:
        kn.display = static_cast<uint32_t>(y.value);
        break;
      case 3:
        kn.count = y.value;
        break;
      case 4:
        kn.total_ps = y.as_int64();
        break;
      case 5:
        kn.min_ps = wire::unzigzag(y.value);
        break;
      case 6:
        kn.max_ps = wire::unzigzag(y.value);
        break;
      case 7:
        read_config(in, y.bytes, kn.configs.emplace_back());
        break;
      case 8:
        read_kernel_op(in, y.bytes, kn.ops.emplace_back());
        break;
    }
  });
}

Writer write_kernel_device(const PartialKernelDevice& d) {
  Writer x;
  x.bytes(1, d.name);
  for (const PartialKernel& kn : d.kernels) x.message(2, write_kernel(kn));
  return x;
}

void read_kernel_device(const Decoder& in, std::string_view msg, PartialKernelDevice& d) {
  in.each(msg, [&](const wire::Field& x) {
    if (x.number == 1) d.name = std::string(x.bytes);
    if (x.number == 2) read_kernel(in, x.bytes, d.kernels.emplace_back());
  });
}

}  // namespace

Writer write_kernels(const PartialKernels& k) {
  Writer w;
  w.boolean(1, k.gpu_events);
  w.boolean(2, k.host_cpu);
  for (const std::string& d : k.other_devices) w.bytes(3, d);
  for (const PartialKernelDevice& d : k.devices) w.message(4, write_kernel_device(d));
  return w;
}

PartialKernels read_kernels(const Decoder& in, std::string_view msg) {
  PartialKernels k;
  in.each(msg, [&](const wire::Field& f) {
    if (f.number == 1) k.gpu_events = f.value != 0;
    if (f.number == 2) k.host_cpu = f.value != 0;
    if (f.number == 3) k.other_devices.emplace_back(f.bytes);
    if (f.number == 4) read_kernel_device(in, f.bytes, k.devices.emplace_back());
  });
  return k;
}

}  // namespace jaxprof::partial_io
