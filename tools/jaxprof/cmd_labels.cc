// jaxprof labels: which labelled autotune ops a lowered or compiled computation contains.
#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <sstream>

#include "cli_common.h"
#include "jaxprof/autotune/labels.h"
#include "jaxprof/common/error.h"

namespace jaxprof::cli {
namespace {

std::string render(const std::vector<AutotuneLabel>& labels, OutputFormat format) {
  if (format == OutputFormat::kJson) {
    std::string out = "{\"labels\": [";
    for (size_t i = 0; i < labels.size(); ++i) {
      const AutotuneLabel& l = labels[i];
      out += fmt::format(
          "{}{{\"label\": {}, \"op\": {}, \"version\": {}, \"op_id\": {}, \"call_key\": {}, "
          "\"complete\": {}, \"occurrences\": {}}}",
          i ? ", " : "", json_string(l.label), json_string(l.op),
          l.complete() ? std::to_string(l.version) : std::string("null"), json_string(l.op_id()),
          l.complete() ? json_string(l.call_key) : std::string("null"), l.complete(),
          l.occurrences);
    }
    return out + "]}\n";
  }
  if (format == OutputFormat::kCsv) {
    std::string out = "label,op,version,call_key,complete,occurrences\n";
    for (const AutotuneLabel& l : labels)
      out += fmt::format("{},{},{},{},{},{}\n", csv_field(l.label), csv_field(l.op),
                         l.complete() ? std::to_string(l.version) : "", csv_field(l.call_key),
                         l.complete(), l.occurrences);
    return out;
  }
  if (labels.empty()) return "no autotune labels found\n";
  Table t({"op", "version", "call key", "occurrences"}, {false, true, false, true});
  for (const AutotuneLabel& l : labels)
    t.add({l.op, l.complete() ? std::to_string(l.version) : "?",
           l.complete() ? l.call_key : "(cut: see docs/autotune.md)",
           std::to_string(l.occurrences)});
  return t.render(60);
}

RegisterCommand labels_command(96, [](CLI::App& app) -> std::function<int()> {
  struct Options {
    std::string file, prefix = std::string(kDefaultLabelPrefix), format = "table";
  };
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand(
      "labels",
      "Autotune labels (PREFIX#OP@vN:KEY) in HLO/StableHLO text or a serialized HloProto");
  cmd->footer("Label grammar and where labels survive lowering: docs/autotune.md.");
  cmd->add_option("file", o->file, "HLO or StableHLO text, or a serialized HloProto (- = stdin)")
      ->required();
  cmd->add_option("--prefix", o->prefix, "Label prefix")->capture_default_str();
  cmd->add_option("--format", o->format, "Output format")
      ->check(CLI::IsMember({"table", "json", "csv"}))
      ->capture_default_str();
  return [o]() {
    std::stringstream ss;
    if (o->file == "-") {
      ss << std::cin.rdbuf();
    } else {
      std::ifstream f(o->file, std::ios::binary);
      if (!f) throw InputError(o->file, "no such file or cannot read");
      ss << f.rdbuf();
    }
    OutputFormat format = OutputFormat::kTable;
    parse_output_format(o->format, format);
    write(render(extract_labels(ss.str(), o->prefix), format));
    return 0;
  };
});

}  // namespace
}  // namespace jaxprof::cli
