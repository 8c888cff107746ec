// The records of the partial file (partial.proto), each with its writer and its reader side by
// side in the file named for it: partial_host_io.cc (a host: its head and tables),
// partial_device_io.cc (a device: op groups, timeline, executions, collectives),
// partial_flame_io.cc, partial_steps_io.cc, partial_compile_io.cc, partial_kernels_io.cc and
// partial_steady_io.cc; partial_validate.cc bounds what a host's records hold, and
// partial_file.cc puts the hosts in a file. Field numbers: partial.proto.
#pragma once

#include <cstdint>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "jaxprof/common/error.h"
#include "jaxprof/model/device_timeline.h"
#include "jaxprof/model/partial/partial.h"
#include "jaxprof/wire/reader.h"
#include "jaxprof/wire/writer.h"

namespace jaxprof::partial_io {

using wire::Writer;

// Reading: every message is a loop over its fields; unknown fields are skipped, so that a newer
// writer's additions do not stop an older reader of the same version. A reader that adds to a
// record (rather than returning one) does so because the field may repeat in a message.
class Decoder {
 public:
  Decoder(std::string_view bytes, const std::string& path)
      : origin_(reinterpret_cast<const uint8_t*>(bytes.data())), path_(path) {}

  [[noreturn]] void bad(const std::string& what) const {
    throw InputError(path_, "corrupt partial file: " + what);
  }

  template <typename F>
  void each(std::string_view msg, F&& f) const {
    wire::Reader r(msg, origin_);
    wire::Field fl;
    while (r.next(fl)) f(fl);
  }
  template <typename T>
  std::vector<T> packed(const wire::Field& f) const {
    std::vector<T> out;
    const uint8_t* p = reinterpret_cast<const uint8_t*>(f.bytes.data());
    const uint8_t* end = p + f.bytes.size();
    while (p < end) out.push_back(static_cast<T>(wire::read_varint(p, end, origin_)));
    return out;
  }

  const uint8_t* origin() const { return origin_; }
  const std::string& path() const { return path_; }

 private:
  const uint8_t* origin_;
  const std::string& path_;
};

// A program id field: absent for kNoProgram.
inline void put_program(Writer& w, uint32_t field, ProgramId id) {
  if (id != kNoProgram) w.varint(field, id);
}

// A device timeline's times: field 3 + i holds kTimelineTimes[i] (written, read and bounded from
// this one list); set_apart_ps, field 13, is written only when it is not 0.
inline constexpr int64_t DeviceTimeline::*kTimelineTimes[] = {
    &DeviceTimeline::span_ps,
    &DeviceTimeline::busy_ps,
    &DeviceTimeline::compute_ps,
    &DeviceTimeline::comm_ps,
    &DeviceTimeline::comm_exposed_ps,
    &DeviceTimeline::memcpy_ps,
    &DeviceTimeline::memcpy_exposed_ps,
    &DeviceTimeline::idle_ps,
    &DeviceTimeline::idle_in_modules_ps,
    &DeviceTimeline::idle_between_modules_ps};
static_assert(std::size(kTimelineTimes) == 10, "fields 3 to 12; 13 is set_apart_ps");

// partial_host_io.cc. The host read is validated (validate below).
Writer write_host(const HostPartial& h);
// `parts`: the lists to decode (kPart*); the others' fields are skipped and stay empty (an
// analysis that reads one part decodes no other).
HostPartial read_host(const Decoder& in, std::string_view msg, uint32_t parts = kPartAll);

// partial_device_io.cc
Writer write_device(const PartialDevice& d);
PartialDevice read_device(const Decoder& in, std::string_view msg, uint32_t parts = kPartAll);

// partial_flame_io.cc
Writer write_flame(const PartialFlame& f);
PartialFlame read_flame(const Decoder& in, std::string_view msg);

// partial_steps_io.cc
Writer write_steps(const PartialSteps& s);
void read_steps(const Decoder& in, std::string_view msg, PartialSteps& steps);

// partial_compile_io.cc
Writer write_compile(const PartialCompile& c);
PartialCompile read_compile(const Decoder& in, std::string_view msg);

// partial_kernels_io.cc
Writer write_kernels(const PartialKernels& k);
PartialKernels read_kernels(const Decoder& in, std::string_view msg);

// partial_steady_io.cc
Writer write_steady(const PartialSteady& s);
PartialSteady read_steady(const Decoder& in, std::string_view msg);

// partial_validate.cc: every index points inside its table, and every time, duration and count
// is within what a capture can hold.
// `parts`: the lists read (read_host); a list left out is not checked against the others.
void validate(const Decoder& in, const HostPartial& h, uint32_t parts = kPartAll);

}  // namespace jaxprof::partial_io
