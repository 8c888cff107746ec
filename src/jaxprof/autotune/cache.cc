#include "jaxprof/autotune/cache.h"

#include <simdjson.h>
#include <sqlite3.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <thread>

#include "jaxprof/common/error.h"
#include "jaxprof/common/escape.h"
#include "jaxprof/common/units.h"

namespace jaxprof {

namespace {

// Long enough to wait out any other writer: a write holds the lock for milliseconds.
constexpr int kBusyTimeoutMs = 60000;

class Statement {
 public:
  Statement(sqlite3* db, const std::string& path, const char* sql) : db_(db), path_(path) {
    if (sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr) != SQLITE_OK) fail();
  }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  void text(int i, std::string_view s) {
    sqlite3_bind_text(stmt_, i, s.data(), static_cast<int>(s.size()), SQLITE_TRANSIENT);
  }
  void real(int i, double v) { sqlite3_bind_double(stmt_, i, v); }
  bool step() {  // true while a row is available
    int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc != SQLITE_DONE) fail();
    return false;
  }
  std::string column_text(int i) const {
    const unsigned char* p = sqlite3_column_text(stmt_, i);
    return p ? std::string(reinterpret_cast<const char*>(p),
                           static_cast<size_t>(sqlite3_column_bytes(stmt_, i)))
             : std::string();
  }
  double column_real(int i) const { return sqlite3_column_double(stmt_, i); }
  void reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
  [[noreturn]] void fail() const { throw InputError(path_, sqlite3_errmsg(db_)); }

 private:
  sqlite3* db_;
  const std::string& path_;
  sqlite3_stmt* stmt_ = nullptr;
};

void exec(sqlite3* db, const std::string& path, const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : sqlite3_errmsg(db);
    sqlite3_free(err);
    throw InputError(path, msg);
  }
}

std::string samples_json(const std::vector<double>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) out += ", ";
    out += number(v[i]);
  }
  return out + "]";
}

std::string minified(simdjson::dom::element e) { return simdjson::minify(e); }

std::vector<double> parse_samples(std::string_view text) {
  std::vector<double> out;
  simdjson::dom::parser parser;
  simdjson::dom::array arr;
  if (parser.parse(text.data(), text.size()).get_array().get(arr)) return out;
  for (simdjson::dom::element x : arr) {
    double d;
    if (!x.get_double().get(d)) out.push_back(d);
  }
  return out;
}

std::string now_utc() {
  std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string this_host() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "";
  return buf;
}

void check_config(const CacheEntry& e, const std::string& path) {
  simdjson::dom::parser parser;
  simdjson::dom::element el;
  if (parser.parse(e.config.data(), e.config.size()).get(el))
    throw InputError(path, "config of " + e.key.op + " is not valid JSON: " + e.config);
}

const char* kSelect =
    "SELECT device, op, call_key, config, samples_ns, median_ns, mad_ns, ci_low_ns, ci_high_ns, "
    "measured_at, host FROM entries ";

CacheEntry row_entry(const Statement& s) {
  CacheEntry e;
  e.key = {s.column_text(0), s.column_text(1), s.column_text(2)};
  e.config = s.column_text(3);
  e.samples_ns = parse_samples(s.column_text(4));
  e.median_ns = s.column_real(5);
  e.mad_ns = s.column_real(6);
  e.ci_low_ns = s.column_real(7);
  e.ci_high_ns = s.column_real(8);
  e.measured_at = s.column_text(9);
  e.host = s.column_text(10);
  return e;
}

// instr() > 0 is a literal substring test: LIKE would treat % and _ in keys as wildcards.
const char* kFilter = "WHERE (?1 = '' OR instr(device, ?1) > 0) AND (?2 = '' OR instr(op, ?2) > 0)";

}  // namespace

std::string AutotuneCache::default_path() {
  if (const char* p = std::getenv("JAXPROF_CACHE"); p && *p) return p;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x)
    return std::string(x) + "/jaxprof/autotune.sqlite";
  const char* home = std::getenv("HOME");
  return std::string(home && *home ? home : ".") + "/.cache/jaxprof/autotune.sqlite";
}

AutotuneCache::AutotuneCache(const std::string& path) : path_(path) {
  std::filesystem::path parent = std::filesystem::path(path).parent_path();
  std::error_code ec;
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) !=
      SQLITE_OK) {
    std::string msg = db_ ? sqlite3_errmsg(db_) : "cannot open";
    sqlite3_close(db_);
    db_ = nullptr;
    throw InputError(path, msg);
  }
  sqlite3_busy_timeout(db_, kBusyTimeoutMs);
  // Switching to WAL needs a moment with no other connection mid-change; processes opening a
  // fresh database together may see SQLITE_BUSY here, so retry for a while.
  for (int attempt = 0;; ++attempt) {
    try {
      exec(db_, path_, "PRAGMA journal_mode=WAL");
      break;
    } catch (const InputError&) {
      if (attempt >= 200) {
        sqlite3_close(db_);
        db_ = nullptr;
        throw;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  try {
    exec(db_, path_,
         "PRAGMA synchronous=FULL;"
         "CREATE TABLE IF NOT EXISTS entries ("
         " device TEXT NOT NULL, op TEXT NOT NULL, call_key TEXT NOT NULL,"
         " config TEXT NOT NULL, samples_ns TEXT NOT NULL DEFAULT '[]',"
         " median_ns REAL, mad_ns REAL, ci_low_ns REAL, ci_high_ns REAL,"
         " measured_at TEXT NOT NULL, host TEXT NOT NULL,"
         " PRIMARY KEY (device, op, call_key))");
  } catch (...) {
    sqlite3_close(db_);
    db_ = nullptr;
    throw;
  }
}

AutotuneCache::~AutotuneCache() { sqlite3_close(db_); }

void AutotuneCache::put(const std::vector<CacheEntry>& entries) {
  for (const CacheEntry& e : entries) check_config(e, path_);
  std::string now = now_utc(), host = this_host();
  // IMMEDIATE takes the write lock up front, so a busy database is waited for (busy timeout)
  // instead of failing when a read transaction would have to upgrade.
  exec(db_, path_, "BEGIN IMMEDIATE");
  try {
    Statement s(db_, path_,
                "INSERT INTO entries (device, op, call_key, config, samples_ns, median_ns, "
                "mad_ns, ci_low_ns, ci_high_ns, measured_at, host) "
                "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11) "
                "ON CONFLICT (device, op, call_key) DO UPDATE SET config = excluded.config, "
                "samples_ns = excluded.samples_ns, median_ns = excluded.median_ns, "
                "mad_ns = excluded.mad_ns, ci_low_ns = excluded.ci_low_ns, "
                "ci_high_ns = excluded.ci_high_ns, measured_at = excluded.measured_at, "
                "host = excluded.host");
    for (const CacheEntry& e : entries) {
      s.text(1, e.key.device);
      s.text(2, e.key.op);
      s.text(3, e.key.call_key);
      s.text(4, e.config);
      s.text(5, samples_json(e.samples_ns));
      s.real(6, e.median_ns);
      s.real(7, e.mad_ns);
      s.real(8, e.ci_low_ns);
      s.real(9, e.ci_high_ns);
      s.text(10, e.measured_at.empty() ? now : e.measured_at);
      s.text(11, e.host.empty() ? host : e.host);
      s.step();
      s.reset();
    }
    exec(db_, path_, "COMMIT");
  } catch (...) {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
}

std::optional<CacheEntry> AutotuneCache::get(const CacheKey& key) const {
  Statement s(db_, path_,
              (std::string(kSelect) + "WHERE device = ?1 AND op = ?2 AND call_key = ?3").c_str());
  s.text(1, key.device);
  s.text(2, key.op);
  s.text(3, key.call_key);
  if (!s.step()) return std::nullopt;
  return row_entry(s);
}

std::vector<CacheEntry> AutotuneCache::list(std::string_view device, std::string_view op) const {
  Statement s(db_, path_,
              (std::string(kSelect) + kFilter + " ORDER BY device, op, call_key").c_str());
  s.text(1, device);
  s.text(2, op);
  std::vector<CacheEntry> out;
  while (s.step()) out.push_back(row_entry(s));
  return out;
}

size_t AutotuneCache::clear(std::string_view device, std::string_view op) {
  Statement s(db_, path_, (std::string("DELETE FROM entries ") + kFilter).c_str());
  s.text(1, device);
  s.text(2, op);
  s.step();
  return static_cast<size_t>(sqlite3_changes(db_));
}

std::string cache_to_json(const std::vector<CacheEntry>& entries) {
  std::string out = "{\"format\": \"jaxprof-autotune-cache\", \"version\": 1, \"entries\": [";
  for (size_t i = 0; i < entries.size(); ++i) {
    const CacheEntry& e = entries[i];
    out += i ? ",\n  " : "\n  ";
    out += "{\"device\": " + json_string(e.key.device) + ", \"op\": " + json_string(e.key.op) +
           ", \"call_key\": " + json_string(e.key.call_key) + ", \"config\": " + e.config +
           ", \"samples_ns\": " + samples_json(e.samples_ns) +
           ", \"median_ns\": " + number(e.median_ns) + ", \"mad_ns\": " + number(e.mad_ns) +
           ", \"ci95_ns\": [" + number(e.ci_low_ns) + ", " + number(e.ci_high_ns) +
           "], \"measured_at\": " + json_string(e.measured_at) +
           ", \"host\": " + json_string(e.host) + "}";
  }
  out += entries.empty() ? "]}\n" : "\n]}\n";
  return out;
}

std::vector<CacheEntry> cache_from_json(std::string_view json, const std::string& source) {
  simdjson::dom::parser parser;
  simdjson::padded_string padded(json);
  simdjson::dom::element root;
  if (auto err = parser.parse(padded).get(root))
    throw InputError(source, std::string("invalid JSON: ") + simdjson::error_message(err));
  simdjson::dom::array arr;
  if (root["entries"].get_array().get(arr))
    throw InputError(source, "no \"entries\" array (expected a `jaxprof cache export` file)");
  std::vector<CacheEntry> out;
  size_t index = 0;
  for (simdjson::dom::element x : arr) {
    auto need = [&](const char* field) {
      std::string_view v;
      if (x[field].get_string().get(v))
        throw InputError(source,
                         "entry " + std::to_string(index) + ": missing string \"" + field + "\"");
      return std::string(v);
    };
    auto num = [&](simdjson::dom::element v) {
      double d = 0;
      if (v.get_double().get(d)) {
        int64_t i = 0;
        if (!v.get_int64().get(i)) d = static_cast<double>(i);
      }
      return d;
    };
    CacheEntry e;
    e.key = {need("device"), need("op"), need("call_key")};
    simdjson::dom::element config;
    if (x["config"].get(config))
      throw InputError(source, "entry " + std::to_string(index) + ": missing \"config\"");
    e.config = minified(config);
    simdjson::dom::element v;
    simdjson::dom::array a;
    if (!x["samples_ns"].get_array().get(a))
      for (simdjson::dom::element s : a) e.samples_ns.push_back(num(s));
    if (!x["median_ns"].get(v)) e.median_ns = num(v);
    if (!x["mad_ns"].get(v)) e.mad_ns = num(v);
    if (!x["ci95_ns"].get_array().get(a) && a.size() == 2) {
      e.ci_low_ns = num(a.at(0).value_unsafe());
      e.ci_high_ns = num(a.at(1).value_unsafe());
    }
    std::string_view s;
    if (!x["measured_at"].get_string().get(s)) e.measured_at = s;
    if (!x["host"].get_string().get(s)) e.host = s;
    out.push_back(std::move(e));
    ++index;
  }
  return out;
}

}  // namespace jaxprof
