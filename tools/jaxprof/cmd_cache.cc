// jaxprof cache: inspect, share and reset the persistent autotuning cache.
#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <sstream>

#include "cli_common.h"
#include "jaxprof/autotune/cache.h"
#include "jaxprof/common/error.h"
#include "jaxprof/common/units.h"

namespace jaxprof::cli {
namespace {

struct CacheOptions {
  std::string db, device, op, file, format = "table";
  std::vector<std::string> key;  // show: DEVICE OP CALL_KEY
};

std::string entries_table(const std::vector<CacheEntry>& entries) {
  Table t({{"device"},
           {"op"},
           {"call key"},
           {"config"},
           {"runs", Measure::kCount},
           {"median", Measure::kDuration},
           {"MAD", Measure::kDuration},
           {"measured at"},
           {"host"}});
  for (const CacheEntry& e : entries)
    t.add({e.key.device, e.key.op, e.key.call_key, e.config, e.samples_ns.size(),
           e.median_ns * 1000, e.mad_ns * 1000, e.measured_at, e.host});
  return t.render(40) + fmt::format("{} entries\n", entries.size());
}

RegisterCommand cache_command(95, [](CLI::App& app) -> std::function<int()> {
  auto o = std::make_shared<CacheOptions>();
  auto* cmd = app.add_subcommand("cache",
                                 "The persistent autotuning cache: list, show, "
                                 "export, import, clear");
  cmd->footer(
      "The database is --db, else $JAXPROF_CACHE, else ~/.cache/jaxprof/autotune.sqlite\n"
      "(SQLite, WAL mode: safe with many processes at once). See docs/autotune.md.");
  cmd->require_subcommand(1);
  auto add_db = [&](CLI::App* sub) {
    sub->add_option("--db", o->db,
                    "Cache database (default: $JAXPROF_CACHE or "
                    "~/.cache/jaxprof/autotune.sqlite)");
  };
  auto add_filter = [&](CLI::App* sub) {
    sub->add_option("--device", o->device, "Only entries whose device fingerprint contains this");
    sub->add_option("--op", o->op, "Only entries whose op id contains this");
  };
  auto* list = cmd->add_subcommand("list", "One row per cached entry");
  add_db(list);
  add_filter(list);
  list->add_option("--format", o->format, "Output format")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  auto* show = cmd->add_subcommand("show", "One entry as JSON, with every sample");
  add_db(show);
  show->add_option("key", o->key, "DEVICE OP CALL_KEY")->required()->expected(3);
  auto* exp = cmd->add_subcommand("export", "Write entries as JSON (to stdout or --output)");
  add_db(exp);
  add_filter(exp);
  exp->add_option("-o,--output", o->file, "Write here instead of stdout");
  auto* imp = cmd->add_subcommand("import", "Add or replace entries from an export file");
  add_db(imp);
  imp->add_option("file", o->file, "JSON file from `jaxprof cache export` (- = stdin)")->required();
  auto* clr = cmd->add_subcommand("clear", "Delete entries (all, or those matching the filters)");
  add_db(clr);
  add_filter(clr);

  return [o, list, show, exp, imp, clr]() {
    AutotuneCache cache(o->db.empty() ? AutotuneCache::default_path() : o->db);
    if (list->parsed()) {
      std::vector<CacheEntry> entries = cache.list(o->device, o->op);
      write(o->format == "json" ? cache_to_json(entries) : entries_table(entries));
    } else if (show->parsed()) {
      auto e = cache.get({o->key[0], o->key[1], o->key[2]});
      if (!e)
        throw InputError(cache.path(),
                         "no entry for " + o->key[0] + " " + o->key[1] + " " + o->key[2]);
      write(cache_to_json({*e}));
    } else if (exp->parsed()) {
      std::string json = cache_to_json(cache.list(o->device, o->op));
      if (o->file.empty()) {
        write(json);
      } else {
        write_file(o->file, json, "autotuning cache entries (JSON)",
                   "  `jaxprof cache import " + o->file + "` adds them to another cache\n");
      }
    } else if (imp->parsed()) {
      std::stringstream ss;
      if (o->file == "-") {
        ss << std::cin.rdbuf();
      } else {
        std::ifstream f(o->file, std::ios::binary);
        if (!f) throw InputError(o->file, "cannot read");
        ss << f.rdbuf();
      }
      std::vector<CacheEntry> entries = cache_from_json(ss.str(), o->file);
      cache.put(entries);
      std::cerr << "imported " << entries.size() << " entries into " << cache.path() << "\n";
    } else if (clr->parsed()) {
      size_t n = cache.clear(o->device, o->op);
      std::cerr << "removed " << n << " entries from " << cache.path() << "\n";
    }
    return 0;
  };
});

}  // namespace
}  // namespace jaxprof::cli
