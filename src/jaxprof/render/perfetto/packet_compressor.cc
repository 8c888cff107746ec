#include "jaxprof/render/perfetto/packet_compressor.h"

#include <zlib.h>

#include <stdexcept>

namespace jaxprof {
namespace {

constexpr uint32_t kPacketField = 1;              // Trace.packet
constexpr uint32_t kCompressedPacketsField = 50;  // TracePacket.compressed_packets

// Level 1: on the 80 MB TPU profile's trace, 280 MB deflate to 45.6 MB in 1.35 s of CPU;
// level 6 gives 41.7 MB for 3.5 s.
constexpr int kLevel = 1;

void append_varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

}  // namespace

void append_compressed_packets(std::string_view packets, std::string& out) {
  // zlib's format (Perfetto's reader takes zlib or gzip headers).
  uLongf size = compressBound(static_cast<uLong>(packets.size()));
  std::string deflated(size, '\0');
  if (compress2(reinterpret_cast<Bytef*>(deflated.data()), &size,
                reinterpret_cast<const Bytef*>(packets.data()), static_cast<uLong>(packets.size()),
                kLevel) != Z_OK)
    throw std::runtime_error("deflate failed");
  deflated.resize(size);
  std::string field;
  append_varint(field, (uint64_t{kCompressedPacketsField} << 3) | 2);
  append_varint(field, deflated.size());
  append_varint(out, (uint64_t{kPacketField} << 3) | 2);
  append_varint(out, field.size() + deflated.size());
  out += field;
  out += deflated;
}

PacketCompressor::PacketCompressor(const std::function<void(std::string_view)>& sink)
    : sink_(sink), thread_([this] { run(); }) {}

PacketCompressor::~PacketCompressor() {
  {
    std::lock_guard lock(mu_);
    done_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

void PacketCompressor::add(std::string& batch) {
  std::unique_lock lock(mu_);
  changed_.wait(lock, [&] { return queue_.size() < 2 || error_; });
  if (error_) std::rethrow_exception(error_);
  queue_.push_back(std::move(batch));
  batch = std::move(spare_);
  batch.clear();
  changed_.notify_all();
}

void PacketCompressor::finish() {
  std::unique_lock lock(mu_);
  changed_.wait(lock, [&] { return (queue_.empty() && !busy_) || error_; });
  if (error_) std::rethrow_exception(error_);
}

void PacketCompressor::run() {
  std::string out;
  for (;;) {
    std::string batch;
    {
      std::unique_lock lock(mu_);
      changed_.wait(lock, [&] { return !queue_.empty() || done_; });
      if (queue_.empty()) return;
      batch = std::move(queue_.front());
      queue_.pop_front();
      busy_ = true;
    }
    try {
      out.clear();
      append_compressed_packets(batch, out);
      sink_(out);
    } catch (...) {
      std::lock_guard lock(mu_);
      if (!error_) error_ = std::current_exception();
    }
    {
      std::lock_guard lock(mu_);
      busy_ = false;
      spare_ = std::move(batch);
    }
    changed_.notify_all();
  }
}

}  // namespace jaxprof
