// A host's steps (partial.proto Steps): the steps and their windows, each writer followed by its
// reader.
#include "jaxprof/formats/partial/partial_io.h"

namespace jaxprof::partial_io {

namespace {

Writer write_step(const PartialStep& s) {
  Writer y;
  y.sint64(1, s.number);
  y.varint(2, s.name);
  y.sint64(3, s.start_ps);
  y.sint64(4, s.end_ps);
  y.varint(5, s.windows);
  y.int64(6, s.longest_window_ps);
  if (s.compiling) y.boolean(7, true);
  return y;
}

void read_step(const Decoder& in, std::string_view msg, PartialStep& s) {
  in.each(msg, [&](const wire::Field& y) {
    switch (y.number) {
      case 1:
        s.number = wire::unzigzag(y.value);
        break;
      case 2:
        s.name = static_cast<uint32_t>(y.value);
        break;
      case 3:
        s.start_ps = wire::unzigzag(y.value);
        break;
      case 4:
        s.end_ps = wire::unzigzag(y.value);
        break;
      case 5:
        s.windows = static_cast<uint32_t>(y.value);
        break;
      case 6:
        s.longest_window_ps = y.as_int64();
        break;
      case 7:
        s.compiling = y.value != 0;
        break;
    }
  });
}

Writer write_step_window(const PartialStepWindow& win) {
  Writer y;
  y.sint64(1, win.plane);
  y.sint64(2, win.start_ps);
  y.sint64(3, win.end_ps);
  y.varint(4, win.step);
  return y;
}

void read_step_window(const Decoder& in, std::string_view msg, PartialStepWindow& w) {
  in.each(msg, [&](const wire::Field& y) {
    if (y.number == 1) w.plane = wire::unzigzag(y.value);
    if (y.number == 2) w.start_ps = wire::unzigzag(y.value);
    if (y.number == 3) w.end_ps = wire::unzigzag(y.value);
    if (y.number == 4) w.step = static_cast<uint32_t>(y.value);
  });
}

}  // namespace

Writer write_steps(const PartialSteps& s) {
  Writer x;
  x.varint(1, static_cast<uint64_t>(s.source));
  for (const PartialStep& st : s.steps) x.message(2, write_step(st));
  for (const PartialStepWindow& win : s.windows) x.message(3, write_step_window(win));
  return x;
}

// Adds to `steps`: a host's steps field may repeat.
void read_steps(const Decoder& in, std::string_view msg, PartialSteps& steps) {
  in.each(msg, [&](const wire::Field& x) {
    if (x.number == 1) {
      if (x.value > static_cast<uint64_t>(StepSource::kNone)) in.bad("unknown step source");
      steps.source = static_cast<StepSource>(x.value);
    } else if (x.number == 2) {
      read_step(in, x.bytes, steps.steps.emplace_back());
    } else if (x.number == 3) {
      read_step_window(in, x.bytes, steps.windows.emplace_back());
    }
  });
}

}  // namespace jaxprof::partial_io
