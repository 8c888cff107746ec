#include "cli_common.h"

#include <cstdio>

#include "jaxprof/analysis/parallel_parts.h"
#include "jaxprof/render/input_render.h"
#include "jaxprof/render/steady_state_render.h"

namespace jaxprof::cli {

std::vector<CommandRegistration>& registered_commands() {
  static std::vector<CommandRegistration> commands;
  return commands;
}

void add_common(CLI::App* cmd, CommonOptions& o) {
  cmd->add_option("path", o.paths,
                  "Profile: a *.xplane.pb[.gz] file, a run directory (plugins/profile/<session>/), "
                  "or a TensorBoard log directory; several *.xplane.pb files load as one "
                  "multi-host profile; *.hlo.pb / *.hlo_proto.pb files add HLO metadata")
      ->required();
  cmd->add_option("--session", o.session, "Session to read from a log directory (default: newest)");
  cmd->add_option("--host", o.hosts, "Only these hosts (repeat or comma-separate)")->delimiter(',');
  cmd->add_option("--format", o.format, "Output format")
      ->check(CLI::IsMember({"table", "json", "csv"}))
      ->capture_default_str();
  add_threads_option(cmd, o.threads);
}

void add_threads_option(CLI::App* cmd, unsigned& threads) {
  cmd->add_option("--threads", threads,
                  "Threads that decode and analyse (default: one per core; the result is the same "
                  "for any number)");
}

namespace {

// What say_input and say_set_apart noted for the JSON output (one command per process).
struct JsonNotes {
  std::vector<std::string> inputs;
  std::string set_apart;
  bool empty() const { return inputs.empty() && set_apart.empty(); }
};
JsonNotes& json_notes() {
  static JsonNotes notes;
  return notes;
}

// `text` with the noted members first when it is a JSON object.
std::string with_input_member(const std::string& text) {
  JsonNotes& notes = json_notes();
  if (notes.empty() || text.empty() || text.front() != '{') return text;
  std::string member;
  const std::vector<std::string>& inputs = notes.inputs;
  if (inputs.size() == 1) {
    member = "\"input\": " + inputs.front();
  } else if (!inputs.empty()) {
    member = "\"input\": [";
    for (size_t i = 0; i < inputs.size(); ++i) member += (i ? ", " : "") + inputs[i];
    member += "]";
  }
  if (!notes.set_apart.empty())
    member += (member.empty() ? "" : ", ") + std::string("\"set_apart\": ") + notes.set_apart;
  notes = {};
  size_t rest = text.find_first_not_of(" \n\t", 1);
  bool empty_object = rest != std::string::npos && text[rest] == '}';
  return "{" + member + (empty_object ? "" : ", ") + text.substr(1);
}

}  // namespace

void say_input(const ProfileFiles& files, bool json_output) {
  if (json_output)
    json_notes().inputs.push_back(render_input_json(files));
  else
    std::fprintf(stderr, "jaxprof: %s\n", render_input_line(files).c_str());
}

void add_steady_state_options(CLI::App* cmd, SteadyStateOptions& o) {
  cmd->add_flag("--include-autotuning", o.include_autotuning,
                "Count the executions of XLA's compile-time autotuner (modules without a program "
                "id, e.g. gemm_fusion_dot.411) as steady state");
  cmd->add_flag("--include-warmup", o.include_warmup,
                "Count each program's first execution on a device, and the device time spent "
                "compiling, as steady state");
}

void say_set_apart(const Profile& profile, const SteadyStateOptions& o, bool with_compiles,
                   bool json_output) {
  SetApartSummary s = summarize_set_apart(steady_state(profile, o),
                                          with_compiles ? &steady_state_time(profile, o) : nullptr);
  if (json_output) {
    json_notes().set_apart = render_set_apart_json(s);
    return;
  }
  std::string line = render_set_apart_line(s);
  if (!line.empty()) std::fprintf(stderr, "jaxprof: %s\n", line.c_str());
}

void write(const std::string& text) {
  if (!json_notes().empty()) {
    std::string with_input = with_input_member(text);
    if (with_input.size() != text.size()) return write(with_input);
  }
  if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() || std::fflush(stdout) != 0) {
    // Nothing to do: the reader went away.
  }
}

void load(const CommonOptions& o, LoadedProfile& out, bool release_counted) {
  LoadOptions lo;
  lo.session = o.session;
  lo.hosts = o.hosts;
  lo.import.threads = o.threads;
  lo.import.release_counted = release_counted;
  analysis_threads.store({.threads = o.threads});
  load_profile(o.paths, lo, out);
  say_input(out.files, format_of(o) == OutputFormat::kJson);
}

OutputFormat format_of(const CommonOptions& o) {
  OutputFormat f = OutputFormat::kTable;
  parse_output_format(o.format, f);
  return f;
}

void warn(const std::vector<std::string>& warnings) {
  for (const auto& w : warnings) std::fprintf(stderr, "jaxprof: warning: %s\n", w.c_str());
}

}  // namespace jaxprof::cli
