// Batches of packets come out deflated, one `compressed_packets` packet each, in the order they
// went in; what the sink throws reaches the writer.
#include "jaxprof/render/perfetto/packet_compressor.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace jaxprof {
namespace {

uint64_t read_varint(std::string_view s, size_t& i) {
  uint64_t v = 0;
  for (int shift = 0;; shift += 7) {
    const auto c = static_cast<uint8_t>(s.at(i++));
    v |= uint64_t{c & 0x7Fu} << shift;
    if (c < 0x80) return v;
  }
}

// The packets a Trace record holding one compressed batch inflates to.
std::string inflate_record(std::string_view record) {
  size_t i = 0;
  EXPECT_EQ(read_varint(record, i), (1u << 3) | 2);  // Trace.packet
  EXPECT_EQ(read_varint(record, i) + i, record.size());
  EXPECT_EQ(read_varint(record, i), (50u << 3) | 2);  // TracePacket.compressed_packets
  const uint64_t n = read_varint(record, i);
  EXPECT_EQ(i + n, record.size());
  std::string out(1 << 20, '\0');
  uLongf size = out.size();
  EXPECT_EQ(uncompress(reinterpret_cast<Bytef*>(out.data()), &size,
                       reinterpret_cast<const Bytef*>(record.data() + i), n),
            Z_OK);
  out.resize(size);
  return out;
}

// A record `0x0a <length> <bytes>` whose packet is `payload`.
std::string record_of(std::string_view payload) {
  std::string r;
  r.push_back('\x0a');
  r.push_back(static_cast<char>(payload.size()));
  r.append(payload);
  return r;
}

TEST(PacketCompressor, BatchesComeOutDeflatedInOrder) {
  std::vector<std::string> written;
  const std::function<void(std::string_view)> sink = [&](std::string_view s) {
    written.emplace_back(s);
  };
  std::vector<std::string> batches;
  {
    PacketCompressor c(sink);
    for (int b = 0; b < 20; ++b) {
      std::string batch;
      for (int k = 0; k < 50; ++k) batch += record_of(std::to_string(b * 1000 + k));
      batches.push_back(batch);
      c.add(batch);
      EXPECT_TRUE(batch.empty());
    }
    c.finish();
    EXPECT_EQ(written.size(), batches.size());
  }
  ASSERT_EQ(written.size(), batches.size());
  for (size_t b = 0; b < batches.size(); ++b) {
    EXPECT_EQ(inflate_record(written[b]), batches[b]) << b;
    EXPECT_LT(written[b].size(), batches[b].size());
  }
}

TEST(PacketCompressor, WhatTheSinkThrowsReachesTheWriter) {
  const std::function<void(std::string_view)> sink = [](std::string_view) {
    throw std::runtime_error("disk full");
  };
  PacketCompressor c(sink);
  std::string batch = record_of("x");
  EXPECT_THROW(
      {
        for (int i = 0; i < 4; ++i) {
          batch = record_of("x");
          c.add(batch);
        }
        c.finish();
      },
      std::runtime_error);
}

TEST(PacketCompressor, DroppedBeforeFinishWritesEverything) {
  std::string out;
  const std::function<void(std::string_view)> sink = [&](std::string_view s) { out += s; };
  {
    PacketCompressor c(sink);
    std::string batch = record_of("abc");
    c.add(batch);
  }
  EXPECT_EQ(inflate_record(out), record_of("abc"));
}

}  // namespace
}  // namespace jaxprof
