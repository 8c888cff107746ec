// A host's compiles (partial.proto Compile): its records with their phase and step times, each
// writer followed by its reader.
#include <string>

#include "jaxprof/formats/partial/partial_io.h"

namespace jaxprof::partial_io {

namespace {

CompilePhase read_phase(const Decoder& in, uint64_t v) {
  if (v >= static_cast<uint64_t>(kCompilePhaseCount)) in.bad("unknown compile phase");
  return static_cast<CompilePhase>(v);
}

Writer write_phase_time(const CompilePhaseTime& ph) {
  Writer y;
  y.varint(1, static_cast<uint64_t>(ph.phase));
  y.int64(2, ph.wall_ps);
  y.int64(3, ph.thread_ps);
  return y;
}

void read_phase_time(const Decoder& in, std::string_view msg, CompilePhaseTime& ph) {
  in.each(msg, [&](const wire::Field& y) {
    if (y.number == 1) ph.phase = read_phase(in, y.value);
    if (y.number == 2) ph.wall_ps = y.as_int64();
    if (y.number == 3) ph.thread_ps = y.as_int64();
  });
}

Writer write_step_time(const CompileStepTime& st) {
  Writer y;
  y.bytes(1, st.name);
  y.varint(2, static_cast<uint64_t>(st.phase));
  y.varint(3, st.count);
  y.int64(4, st.wall_ps);
  y.int64(5, st.thread_ps);
  return y;
}

void read_step_time(const Decoder& in, std::string_view msg, CompileStepTime& st) {
  in.each(msg, [&](const wire::Field& y) {
    if (y.number == 1) st.name = std::string(y.bytes);
    if (y.number == 2) st.phase = read_phase(in, y.value);
    if (y.number == 3) st.count = y.value;
    if (y.number == 4) st.wall_ps = y.as_int64();
    if (y.number == 5) st.thread_ps = y.as_int64();
  });
}

Writer write_record(const CompileRecord& r) {
  Writer x;
  x.bytes(1, r.host);
  x.bytes(2, r.thread);
  x.bytes(3, r.module);
  x.bytes(4, r.function);
  put_program(x, 5, r.program_id);
  x.sint64(6, r.start_ps);
  x.int64(7, r.wall_ps);
  x.varint(8, r.events);
  x.varint(9, r.worker_threads);
  x.int64(10, r.worker_busy_ps);
  for (const CompilePhaseTime& ph : r.phases) x.message(11, write_phase_time(ph));
  for (const CompileStepTime& st : r.steps) x.message(12, write_step_time(st));
  return x;
}

void read_record(const Decoder& in, std::string_view msg, CompileRecord& r) {
  in.each(msg, [&](const wire::Field& x) {
    switch (x.number) {
      case 1:
        r.host = std::string(x.bytes);
        break;
      case 2:
        r.thread = std::string(x.bytes);
        break;
      case 3:
        r.module = std::string(x.bytes);
        break;
      case 4:
        r.function = std::string(x.bytes);
        break;
      case 5:
        r.program_id = x.value;
        break;
      case 6:
        r.start_ps = wire::unzigzag(x.value);
        break;
      case 7:
        r.wall_ps = x.as_int64();
        break;
      case 8:
        r.events = x.value;
        break;
      case 9:
        r.worker_threads = static_cast<uint32_t>(x.value);
        break;
      case 10:
        r.worker_busy_ps = x.as_int64();
        break;
      case 11:
        read_phase_time(in, x.bytes, r.phases.emplace_back());
        break;
      case 12:
        read_step_time(in, x.bytes, r.steps.emplace_back());
        break;
    }
  });
  if (r.phases.size() != static_cast<size_t>(kCompilePhaseCount))
    in.bad("a compile without its phases");
}

}  // namespace

Writer write_compile(const PartialCompile& c) {
  Writer w;
  w.boolean(1, c.totals_only);
  for (const CompileRecord& r : c.records) w.message(2, write_record(r));
  w.boolean(3, c.saw_stage);
  w.varint(4, c.unattributed);
  return w;
}

PartialCompile read_compile(const Decoder& in, std::string_view msg) {
  PartialCompile c;
  in.each(msg, [&](const wire::Field& f) {
    if (f.number == 1) c.totals_only = f.value != 0;
    if (f.number == 3) c.saw_stage = f.value != 0;
    if (f.number == 4) c.unattributed = f.value;
    if (f.number == 2) read_record(in, f.bytes, c.records.emplace_back());
  });
  return c;
}

}  // namespace jaxprof::partial_io
