#include "jaxprof/render/perfetto/json_trace_sink.h"

#include <fmt/format.h>

#include "jaxprof/common/units.h"
#include "jaxprof/render/perfetto/perfetto.h"

namespace jaxprof {

void JsonTraceSink::begin(int64_t base_ns) {
  out(fmt::format(
      "{{\"displayTimeUnit\": \"ns\", \"otherData\": {{\"producer\": \"jaxprof\", "
      "\"base_ns\": {}, \"time_unit\": \"ts and dur are microseconds since base_ns, exact "
      "from integer picoseconds\"}}, \"traceEvents\": [\n"
      "{{\"ph\": \"M\", \"pid\": 0, \"tid\": 0, \"name\": \"process_name\", \"args\": "
      "{{\"name\": \"jaxprof\"}}}}",
      base_ns));
}

void JsonTraceSink::hlo_proto(std::string_view program_id_json, std::string_view module,
                              bool bare_module, std::string_view serialized) {
  out(fmt::format(
      ",\n{{\"ph\": \"M\", \"pid\": 0, \"tid\": 0, \"name\": \"jaxprof_hlo_proto\", \"args\": "
      "{{\"program_id\": {}, \"module\": {}, \"bare_module\": {}, \"proto\": \"",
      program_id_json, json_string_html_safe(module), bare_module ? "true" : "false"));
  out(serialized);
  out("\"}}");
}

void JsonTraceSink::process(int pid, std::string_view name, std::string_view host) {
  out(fmt::format(
      ",\n{{\"ph\": \"M\", \"pid\": {}, \"tid\": 0, \"name\": \"process_name\", \"args\": "
      "{{\"name\": {}, \"host\": {}}}}}",
      pid, json_string_html_safe(name), json_string_html_safe(host)));
  out(fmt::format(
      ",\n{{\"ph\": \"M\", \"pid\": {}, \"tid\": 0, \"name\": \"process_labels\", \"args\": "
      "{{\"labels\": {}}}}}",
      pid, json_string_html_safe(host)));
  out(
      fmt::format(",\n{{\"ph\": \"M\", \"pid\": {}, \"tid\": 0, \"name\": \"process_sort_index\", "
                  "\"args\": {{\"sort_index\": {}}}}}",
                  pid, pid));
}

void JsonTraceSink::thread(int pid, int tid, std::string_view name, bool derived) {
  // A derived track is marked so that a reader of the trace leaves it out.
  out(fmt::format(
      ",\n{{\"ph\": \"M\", \"pid\": {}, \"tid\": {}, \"name\": \"thread_name\", \"args\": "
      "{{\"name\": {}{}}}}}",
      pid, tid, json_string_html_safe(name), derived ? ", \"jaxprof_derived\": true" : ""));
  out(
      fmt::format(",\n{{\"ph\": \"M\", \"pid\": {}, \"tid\": {}, \"name\": \"thread_sort_index\", "
                  "\"args\": {{\"sort_index\": {}}}}}",
                  pid, tid, tid));
}

void JsonTraceSink::counter_track(int pid, int tid, std::string_view name,
                                  std::string_view series) {
  // Chrome traces name a counter by its events and their arg; the thread, named as viewers name
  // the counter, marks it derived for jaxprof's reader, which passes over its events.
  thread(pid, tid, std::string(name) + " " + std::string(series), /*derived=*/true);
  counter_names_[{pid, tid}] = {json_string_html_safe(name), json_string_html_safe(series)};
}

void JsonTraceSink::slice(int pid, int tid, std::string_view name, std::string_view name_json,
                          int64_t start_ps, int64_t duration_ps, const TraceArgs* args,
                          SliceFlow flow) {
  std::string flows;
  // Flow events as Chrome's "bind_id" form: the ids bind the two complete events.
  if (flow.out) flows += fmt::format(", \"bind_id\": \"{:#x}\", \"flow_out\": true", flow.out);
  if (flow.in) flows += fmt::format(", \"bind_id\": \"{:#x}\", \"flow_in\": true", flow.in);
  out(fmt::format(
      ",\n{{\"ph\": \"X\", \"pid\": {}, \"tid\": {}, \"name\": {}, \"ts\": {}, \"dur\": {}{}{}}}",
      pid, tid, name_json.empty() ? json_string_html_safe(name) : std::string(name_json),
      ps_to_us_exact(start_ps), ps_to_us_exact(duration_ps), flows,
      args ? args->render() : std::string()));
  // A complete event binds one arrow ("bind_id"); jaxprof's own arrows (collectives' arrivals,
  // the critical path) are flow events (phases s and f), bound to the slice that starts at
  // their time.
  for (auto [id, phase] : {std::pair{flow.arrival_out, 's'}, std::pair{flow.arrival_in, 'f'}})
    if (id)
      out(
          fmt::format(",\n{{\"ph\": \"{}\", \"pid\": {}, \"tid\": {}, \"name\": \"{}\", "
                      "\"cat\": \"collective\", \"id\": \"{:#x}\", \"ts\": {}{}}}",
                      phase, pid, tid, flow_event_name(id), id, ps_to_us_exact(start_ps),
                      phase == 'f' ? ", \"bp\": \"e\"" : ""));
}

void JsonTraceSink::counter(int pid, int tid, int64_t time_ps, double value) {
  const auto& [name, series] = counter_names_[{pid, tid}];
  const std::optional<int64_t> whole = whole_number(value);
  out(
      fmt::format(",\n{{\"ph\": \"C\", \"pid\": {}, \"tid\": {}, \"name\": {}, \"ts\": {}, "
                  "\"args\": {{{}: {}}}}}",
                  pid, tid, name, ps_to_us_exact(time_ps), series,
                  whole ? fmt::format("{}", *whole) : number(value)));
}

void JsonTraceSink::end(const std::vector<std::string>& notes) {
  if (!notes.empty()) {
    std::string list;
    for (const std::string& n : notes)
      list += (list.empty() ? "" : ", ") + json_string_html_safe(n);
    out(fmt::format(
        ",\n{{\"ph\": \"M\", \"pid\": 0, \"tid\": 0, \"name\": \"jaxprof_notes\", \"args\": "
        "{{\"notes\": [{}]}}}}",
        list));
  }
  out("\n]}\n");
  flush();
}

}  // namespace jaxprof
