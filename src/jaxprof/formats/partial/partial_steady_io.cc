// A host's steady state (partial.proto SteadyState): the options it was extracted with and the
// work set apart (SetApart); each writer followed by its reader.
#include <string>

#include "jaxprof/formats/partial/partial_io.h"

namespace jaxprof::partial_io {

namespace {

Writer write_set_apart(const SetApartWork& s) {
  Writer w;
  w.varint(1, s.executions);
  w.varint(2, s.op_events);
  w.int64(3, s.execution_ps);
  for (const std::string& m : s.modules) w.bytes(4, m);
  return w;
}

SetApartWork read_set_apart(const Decoder& in, std::string_view msg) {
  SetApartWork s;
  in.each(msg, [&](const wire::Field& f) {
    if (f.number == 1) s.executions = f.value;
    if (f.number == 2) s.op_events = f.value;
    if (f.number == 3) s.execution_ps = f.as_int64();
    if (f.number == 4) s.modules.emplace_back(f.bytes);
  });
  return s;
}

}  // namespace

Writer write_steady(const PartialSteady& s) {
  Writer w;
  w.boolean(1, s.options.include_autotuning);
  w.boolean(2, s.options.include_warmup);
  w.message(3, write_set_apart(s.autotuning));
  w.message(4, write_set_apart(s.warmup));
  w.int64(5, s.all_execution_ps);
  w.varint(6, s.devices_without_steady_state);
  return w;
}

PartialSteady read_steady(const Decoder& in, std::string_view msg) {
  PartialSteady s;
  s.known = true;
  in.each(msg, [&](const wire::Field& f) {
    switch (f.number) {
      case 1:
        s.options.include_autotuning = f.value != 0;
        break;
      case 2:
        s.options.include_warmup = f.value != 0;
        break;
      case 3:
        s.autotuning = read_set_apart(in, f.bytes);
        break;
      case 4:
        s.warmup = read_set_apart(in, f.bytes);
        break;
      case 5:
        s.all_execution_ps = f.as_int64();
        break;
      case 6:
        s.devices_without_steady_state = f.value;
        break;
    }
  });
  return s;
}

}  // namespace jaxprof::partial_io
