#include "jaxprof/render/perfetto/packet_compressor.h"

#include <libdeflate.h>

#include <memory>
#include <stdexcept>

#include "jaxprof/wire/writer.h"

namespace jaxprof {
namespace {

constexpr uint32_t kPacketField = 1;              // Trace.packet
constexpr uint32_t kCompressedPacketsField = 50;  // TracePacket.compressed_packets

// libdeflate at level 1: the 80 MB TPU profile's trace, 280 MB, deflates to 45.0 MB in 1.24 s
// where zlib's level 1 took 2.65 s for 45.6 MB (same machine, loaded); libdeflate's level 6
// gives 41.7 MB for 3.85 s.
constexpr int kLevel = 1;

struct CompressorDeleter {
  void operator()(libdeflate_compressor* c) const { libdeflate_free_compressor(c); }
};

}  // namespace

void append_compressed_packets(std::string_view packets, std::string& out) {
  // One compressor per thread: making one allocates its tables.
  thread_local std::unique_ptr<libdeflate_compressor, CompressorDeleter> compressor(
      libdeflate_alloc_compressor(kLevel));
  if (!compressor) throw std::runtime_error("deflate: out of memory");
  // zlib's format (Perfetto's reader takes zlib or gzip headers).
  std::string deflated(libdeflate_zlib_compress_bound(compressor.get(), packets.size()), '\0');
  const size_t size = libdeflate_zlib_compress(compressor.get(), packets.data(), packets.size(),
                                               deflated.data(), deflated.size());
  if (size == 0) throw std::runtime_error("deflate failed");
  wire::Writer packet;
  packet.bytes(kCompressedPacketsField, std::string_view(deflated.data(), size));
  wire::Writer::append_message(out, kPacketField, packet);
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
