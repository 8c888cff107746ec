// A device's flamegraphs (partial.proto FlameDevice) and their stacks as packed columns
// (FlameStacks): each writer followed by its reader.
#include "jaxprof/formats/partial/partial_io.h"
#include "jaxprof/model/flame_frame_kind.h"

namespace jaxprof::partial_io {

namespace {

Writer write_flame_stacks(const std::vector<PartialFlameFrame>& f) {
  Writer w;
  w.packed(1, f.size(), [&](size_t i) { return f[i].parent; });
  w.packed(2, f.size(), [&](size_t i) { return f[i].name; });
  w.packed(3, f.size(), [&](size_t i) { return f[i].module; });
  w.packed(4, f.size(), [&](size_t i) { return f[i].kind; });
  w.packed(5, f.size(), [&](size_t i) { return f[i].self_ps; });
  return w;
}

std::vector<PartialFlameFrame> read_flame_stacks(const Decoder& in, std::string_view msg) {
  std::vector<uint32_t> parents, names, modules, kinds;
  std::vector<int64_t> selfs;
  in.each(msg, [&](const wire::Field& x) {
    if (x.type != wire::WireType::kLen) in.bad("flame stacks are not packed");
    if (x.number == 1) parents = in.packed<uint32_t>(x);
    if (x.number == 2) names = in.packed<uint32_t>(x);
    if (x.number == 3) modules = in.packed<uint32_t>(x);
    if (x.number == 4) kinds = in.packed<uint32_t>(x);
    if (x.number == 5) selfs = in.packed<int64_t>(x);
  });
  const size_t n = parents.size();
  if (names.size() != n || modules.size() != n || kinds.size() != n || selfs.size() != n)
    in.bad("flame stack columns differ in length");
  std::vector<PartialFlameFrame> out(n);
  for (size_t i = 0; i < n; ++i) {
    if (parents[i] > i) in.bad("a flame frame before its parent");
    if (kinds[i] < static_cast<uint32_t>(FrameKind::kSource) ||
        kinds[i] > static_cast<uint32_t>(FrameKind::kOp))
      in.bad("a flame frame of an unknown kind");
    out[i] = {parents[i], names[i], modules[i], static_cast<uint8_t>(kinds[i]), selfs[i]};
  }
  return out;
}

}  // namespace

Writer write_flame(const PartialFlame& f) {
  Writer w;
  w.varint(1, f.events);
  w.int64(2, f.busy_ps);
  w.int64(3, f.span_ps);
  w.boolean(4, f.has_modules);
  w.int64(5, f.idle_during_modules_ps);
  w.int64(6, f.idle_between_modules_ps);
  w.int64(7, f.set_apart_ps);
  w.packed(8, f.modules_used.size(), [&](size_t i) { return f.modules_used[i]; });
  for (uint32_t by = 0; by < 3; ++by)
    if (f.bys & (1u << by)) w.message(9 + by, write_flame_stacks(f.by[by]));
  w.boolean(12, f.present);
  return w;
}

PartialFlame read_flame(const Decoder& in, std::string_view msg) {
  PartialFlame f;
  in.each(msg, [&](const wire::Field& x) {
    switch (x.number) {
      case 1:
        f.events = x.value;
        break;
      case 2:
        f.busy_ps = x.as_int64();
        break;
      case 3:
        f.span_ps = x.as_int64();
        break;
      case 4:
        f.has_modules = x.value != 0;
        break;
      case 5:
        f.idle_during_modules_ps = x.as_int64();
        break;
      case 6:
        f.idle_between_modules_ps = x.as_int64();
        break;
      case 7:
        f.set_apart_ps = x.as_int64();
        break;
      case 8:
        if (x.type != wire::WireType::kLen) in.bad("flame modules are not packed");
        f.modules_used = in.packed<uint32_t>(x);
        break;
      case 9:
      case 10:
      case 11:
        f.by[x.number - 9] = read_flame_stacks(in, x.bytes);
        f.bys |= static_cast<uint8_t>(1u << (x.number - 9));
        break;
      case 12:
        f.present = x.value != 0;
        break;
    }
  });
  return f;
}

}  // namespace jaxprof::partial_io
