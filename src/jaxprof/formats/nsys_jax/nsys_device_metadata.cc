#include "jaxprof/formats/nsys_jax/nsys_device_metadata.h"

#include <charconv>

#include "jaxprof/io/parquet.h"

namespace jaxprof {

namespace {

std::string gpu_column(std::string_view field) {
  return "('TARGET_INFO_GPU', '" + std::string(field) + "')";
}

// G of "Xla:#global=G,local=...#", or -1.
int64_t global_id(std::string_view nvtx_name) {
  size_t at = nvtx_name.find("#global=");
  if (at == std::string_view::npos) return -1;
  const char* b = nvtx_name.data() + at + 8;
  const char* e = nvtx_name.data() + nvtx_name.size();
  int64_t g = -1;
  auto [p, ec] = std::from_chars(b, e, g);
  if (ec != std::errc() || p == e || (*p != ',' && *p != '#') || g < 0) return -1;
  return g;
}

}  // namespace

std::map<int64_t, NsysDevice> parse_device_metadata(std::string_view bytes,
                                                    const std::string& name) {
  ParquetFile f(bytes, name);
  std::map<int64_t, NsysDevice> out;
  int ids = f.find("('TARGET_INFO_NVTX_CUDA_DEVICE', 'name')");
  if (ids < 0 || f.columns()[ids].type != ParquetType::kByteArray) return out;
  ParquetColumn nvtx = f.read(ids);
  auto text = [&](std::string_view field) {
    int c = f.find(gpu_column(field));
    return c >= 0 && f.columns()[c].type == ParquetType::kByteArray ? f.read(c) : ParquetColumn{};
  };
  auto integer = [&](std::string_view field) {
    int c = f.find(gpu_column(field));
    ParquetType t = c >= 0 ? f.columns()[c].type : ParquetType::kByteArray;
    return t == ParquetType::kInt32 || t == ParquetType::kInt64 ? f.read(c) : ParquetColumn{};
  };
  ParquetColumn names = text("name");
  // (XSpace stat, Nsight Systems field, divisor): Nsight gives the clock in Hz, XSpace in kHz.
  struct Capability {
    const char* stat;
    const char* field;
    int64_t divisor;
  };
  static constexpr Capability kCapabilities[] = {
      {"clock_rate", "clockRate", 1000},          {"core_count", "smCount", 1},
      {"memory_bandwidth", "memoryBandwidth", 1}, {"memory_size", "totalMemory", 1},
      {"compute_cap_major", "computeMajor", 1},   {"compute_cap_minor", "computeMinor", 1},
  };
  std::vector<ParquetColumn> values;
  for (const Capability& c : kCapabilities) values.push_back(integer(c.field));
  for (size_t row = 0; row < nvtx.size(); ++row) {
    if (nvtx.is_null(row)) continue;
    int64_t g = global_id(nvtx.strings[row]);
    if (g < 0) continue;
    NsysDevice& d = out[g];
    if (row < names.size() && !names.is_null(row)) d.name = std::string(names.strings[row]);
    for (size_t k = 0; k < values.size(); ++k)
      if (row < values[k].size() && !values[k].is_null(row))
        d.capabilities.emplace_back(kCapabilities[k].stat,
                                    values[k].ints[row] / kCapabilities[k].divisor);
  }
  return out;
}

}  // namespace jaxprof
