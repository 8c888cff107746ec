// Batches of serialized TracePackets deflated into one TracePacket each (its
// `compressed_packets` field, as Perfetto's own tracing service writes when asked to compress):
// Perfetto's trace processor and UI inflate them as they read. An op event repeats its op's
// stats on every run, so the packets shrink about 6x; the trace on disk is then smaller than the
// profile it came from. The deflating (libdeflate, level 1) runs on a thread of its own, beside
// the writer, and at most two batches wait for it, so memory stays bounded.
#pragma once

#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

namespace jaxprof {

class PacketCompressor {
 public:
  // `sink` receives the wrapped packets in the order the batches came (on the compressor's
  // thread; nothing else calls it meanwhile).
  explicit PacketCompressor(const std::function<void(std::string_view)>& sink);
  ~PacketCompressor();
  PacketCompressor(const PacketCompressor&) = delete;
  PacketCompressor& operator=(const PacketCompressor&) = delete;

  // A batch of whole records `0x0a <length> <packet>`, as a Trace holds them; `batch` is left
  // empty (its memory swapped with a spent batch's, so that neither side allocates again).
  void add(std::string& batch);
  // Waits until every batch is written; rethrows what the sink threw.
  void finish();

 private:
  void run();

  const std::function<void(std::string_view)>& sink_;
  std::mutex mu_;
  std::condition_variable changed_;
  std::deque<std::string> queue_;
  std::string spare_;
  bool done_ = false, busy_ = false;
  std::exception_ptr error_;
  std::thread thread_;
};

// The TracePacket that holds `packets` (whole records) deflated, appended to `out` as a Trace's
// record. Exposed for tests.
void append_compressed_packets(std::string_view packets, std::string& out);

}  // namespace jaxprof
