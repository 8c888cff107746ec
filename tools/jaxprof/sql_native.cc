#include "sql_native.h"

#include <csignal>
#include <cstdio>
#include <memory>
#include <thread>

#include "cli_common.h"
#include "jaxprof/analysis/tables/tables.h"
#include "jaxprof/formats/load.h"
#include "jaxprof/render/text/sql_render.h"
#include "jaxprof/sql/duckdb_session.h"

namespace jaxprof::cli {
namespace {

// DuckDB loaded and its database open, or why not (on a thread of its own: it takes about as long
// as reading a large profile).
struct OpenDuckDb {
  std::unique_ptr<duckdb_c::Api> api;
  std::unique_ptr<DuckDbSession> session;
  std::string why_not;

  void open(const duckdb_c::Location& where) {
    api = duckdb_c::load(where, why_not);
    if (!api) return;
    session = std::make_unique<DuckDbSession>(*api);
    if (!session->open(why_not)) session.reset();
  }
};

std::string render_sql(const SqlResult& rows, const std::string& format) {
  if (format == "json") return render_sql_json(rows);
  if (format == "csv") return render_sql_csv(rows);
  return render_sql_table(rows);
}

}  // namespace

std::optional<int> run_sql_natively(const SqlRequest& r, std::string& why_not) {
  if (r.format == "parquet") {
    why_not = "Parquet is written by the Python package";
    return std::nullopt;
  }
  const duckdb_c::Location where = duckdb_c::default_location();
  if (where.library.empty()) {
    why_not = "no DuckDB library known (the build found none; JAXPROF_DUCKDB_LIBRARY)";
    return std::nullopt;
  }
  // Kept for the life of the process, which ends without tearing them down (cmd_sql.cc).
  static OpenDuckDb duck;
  std::thread opener([&where] { duck.open(where); });
  std::vector<std::shared_ptr<const RecordTable>> tables;
  try {
    // As the Python package reads it (jaxprof.sql: _core.load with no session or hosts), and only
    // the tables the query names.
    static LoadedProfile loaded;  // not freed: see `duck`
    load_profile(r.paths, LoadOptions{}, loaded);
    for (const std::string& name : tables_named_in(r.query))
      tables.push_back(std::make_shared<const RecordTable>(build_table(loaded.profile, name)));
  } catch (...) {
    opener.join();
    throw;
  }
  opener.join();
  if (!duck.session) {
    why_not = duck.why_not;
    return std::nullopt;
  }
  for (auto& t : tables)
    if (!duck.session->add_table(std::move(t), why_not)) return std::nullopt;
  DuckDbSession::Outcome out = duck.session->run(r.query);
  if (out.kind == DuckDbSession::Outcome::kError) {
    std::fprintf(stderr, "jaxprof: sql: %s\n", out.message.c_str());
    return kExitBadInput;
  }
  if (out.kind == DuckDbSession::Outcome::kUnsupported) {
    why_not = out.message;
    return std::nullopt;
  }
  const std::string text = render_sql(out.rows, r.format);
  if (r.output.empty()) {
    // A reader that goes away (| head) ends the command with exit 0, as in Python.
    std::signal(SIGPIPE, SIG_IGN);
    write(text);
    return 0;
  }
  std::FILE* f = std::fopen(r.output.c_str(), "w");
  if (f == nullptr) {
    why_not = "cannot open " + r.output + " (the Python package says why)";
    return std::nullopt;
  }
  const bool written = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  if (std::fclose(f) != 0 || !written) {
    why_not = "cannot write " + r.output;
    return std::nullopt;
  }
  return 0;
}

}  // namespace jaxprof::cli
