// A host's record (partial.proto Host): its head (names, clock zero, string table), its module
// and op-info tables and what it says of its capture, with the other records it holds written
// and read by the files named in partial_io.h. Each writer followed by its reader.
#include <string>
#include <utility>

#include "jaxprof/formats/partial/partial_io.h"

namespace jaxprof::partial_io {

namespace {

Writer write_module(const PartialModule& m) {
  Writer x;
  x.varint(1, m.name);
  put_program(x, 2, m.program_id);
  return x;
}

void read_module(const Decoder& in, std::string_view msg, PartialModule& m) {
  in.each(msg, [&](const wire::Field& x) {
    if (x.number == 1) m.name = static_cast<uint32_t>(x.value);
    if (x.number == 2) m.program_id = x.value;
  });
}

Writer write_op_info(const PartialOpInfo& i) {
  Writer x;
  x.varint(1, i.opcode);
  x.varint(2, i.op_name);
  x.varint(3, i.source);
  x.varint(4, i.category);
  return x;
}

void read_op_info(const Decoder& in, std::string_view msg, PartialOpInfo& i) {
  in.each(msg, [&](const wire::Field& x) {
    if (x.number == 1) i.opcode = static_cast<uint32_t>(x.value);
    if (x.number == 2) i.op_name = static_cast<uint32_t>(x.value);
    if (x.number == 3) i.source = static_cast<uint32_t>(x.value);
    if (x.number == 4) i.category = static_cast<uint32_t>(x.value);
  });
}

// Capture: what the profile says of its capture.
Writer write_capture(const HostPartial& h) {
  Writer x;
  for (const std::string& c : h.captured_on) x.bytes(1, c);
  x.boolean(2, h.gpu);
  x.boolean(3, h.tpu);
  return x;
}

// Adds to the host's capture facts: the field may repeat.
void read_capture(const Decoder& in, std::string_view msg, HostPartial& h) {
  in.each(msg, [&](const wire::Field& x) {
    if (x.number == 1) h.captured_on.emplace_back(x.bytes);
    if (x.number == 2) h.gpu = x.value != 0;
    if (x.number == 3) h.tpu = x.value != 0;
  });
}

}  // namespace

Writer write_host(const HostPartial& h) {
  Writer w;
  w.varint(1, h.parts);
  w.bytes(2, h.host);
  w.bytes(3, h.path);
  w.int64(4, h.base_ns);
  w.varint(5, h.file_bytes);
  w.boolean(6, h.cpu_backend);
  for (const std::string& s : h.strings.all()) w.bytes(7, s);
  for (const PartialModule& m : h.modules) w.message(8, write_module(m));
  for (const PartialOpInfo& i : h.op_infos) w.message(9, write_op_info(i));
  for (const PartialDevice& d : h.devices) w.message(10, write_device(d));
  w.message(11, write_steps(h.steps));
  w.message(12, write_compile(h.compile));
  for (const std::string& s : h.warnings) w.bytes(13, s);
  if (h.parts & kPartKernels) w.message(14, write_kernels(h.kernels));
  if (h.steady.known) w.message(15, write_steady(h.steady));
  w.message(16, write_capture(h));
  return w;
}

HostPartial read_host(const Decoder& in, std::string_view msg, uint32_t parts) {
  HostPartial h;
  std::vector<std::string> strings;
  in.each(msg, [&](const wire::Field& f) {
    switch (f.number) {
      case 1:
        h.parts = static_cast<uint32_t>(f.value);
        break;
      case 2:
        h.host = std::string(f.bytes);
        break;
      case 3:
        h.path = std::string(f.bytes);
        break;
      case 4:
        h.base_ns = f.as_int64();
        break;
      case 5:
        h.file_bytes = f.value;
        break;
      case 6:
        h.cpu_backend = f.value != 0;
        break;
      case 7:
        strings.emplace_back(f.bytes);
        break;
      case 8:
        read_module(in, f.bytes, h.modules.emplace_back());
        break;
      case 9:
        read_op_info(in, f.bytes, h.op_infos.emplace_back());
        break;
      case 10:
        h.devices.push_back(read_device(in, f.bytes, parts));
        break;
      case 11:
        if (parts & kPartSteps) read_steps(in, f.bytes, h.steps);
        break;
      case 12:
        if (parts & (kPartCompile | kPartCompileTotals)) h.compile = read_compile(in, f.bytes);
        break;
      case 13:
        h.warnings.emplace_back(f.bytes);
        break;
      case 14:
        if (parts & kPartKernels) h.kernels = read_kernels(in, f.bytes);
        break;
      case 15:
        h.steady = read_steady(in, f.bytes);
        break;
      case 16:
        read_capture(in, f.bytes, h);
        break;
    }
  });
  if (strings.empty() || !strings.front().empty())
    in.bad("the string table does not start with \"\"");
  h.strings.assign(std::move(strings));
  if (h.modules.empty()) in.bad("no module table");
  validate(in, h, parts);
  return h;
}

}  // namespace jaxprof::partial_io
