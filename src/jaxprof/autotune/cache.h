// The persistent autotuning cache: the configuration chosen for an op on a device for one call
// signature, with the measurement that chose it. SQLite in WAL mode, one row per key, every write
// one transaction, so many processes can write at once without losing an update and a process
// killed mid-write leaves the previous state (docs/autotune.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

struct sqlite3;

namespace jaxprof {

struct CacheKey {
  std::string device;    // fingerprint: device kind and the software versions that change speed
  std::string op;        // op id with its version, e.g. "flash_attention@v3"
  std::string call_key;  // stable hash of shapes, dtypes, shardings and static parameters
  bool operator==(const CacheKey&) const = default;
};

struct CacheEntry {
  CacheKey key;
  std::string config = "{}";  // the chosen configuration, JSON text
  std::vector<double> samples_ns;
  double median_ns = 0, mad_ns = 0, ci_low_ns = 0, ci_high_ns = 0;
  std::string measured_at;  // ISO 8601 UTC; now() when empty on put
  std::string host;         // where it was measured; this host when empty on put
};

class AutotuneCache {
 public:
  // Opens or creates the database (and its directory). Throws InputError when it cannot.
  explicit AutotuneCache(const std::string& path);
  ~AutotuneCache();
  AutotuneCache(const AutotuneCache&) = delete;
  AutotuneCache& operator=(const AutotuneCache&) = delete;

  // Inserts or replaces (last writer wins per key), all entries in one transaction. Throws
  // InputError for a config that is not valid JSON.
  void put(const std::vector<CacheEntry>& entries);
  void put(const CacheEntry& entry) { put(std::vector<CacheEntry>{entry}); }
  std::optional<CacheEntry> get(const CacheKey& key) const;
  // Entries whose device and op contain the given substrings ("" = any), ordered by key.
  std::vector<CacheEntry> list(std::string_view device = "", std::string_view op = "") const;
  // Deletes what list() would return; returns how many rows went.
  size_t clear(std::string_view device = "", std::string_view op = "");

  const std::string& path() const { return path_; }

  // $JAXPROF_CACHE, else $XDG_CACHE_HOME/jaxprof/autotune.sqlite, else
  // ~/.cache/jaxprof/autotune.sqlite.
  static std::string default_path();

 private:
  std::string path_;
  sqlite3* db_ = nullptr;
};

// {"format": "jaxprof-autotune-cache", "version": 1, "entries": [...]}; see docs/autotune.md.
std::string cache_to_json(const std::vector<CacheEntry>& entries);
// Throws InputError (file `source`) for malformed JSON or a missing key field.
std::vector<CacheEntry> cache_from_json(std::string_view json, const std::string& source = "");

}  // namespace jaxprof
