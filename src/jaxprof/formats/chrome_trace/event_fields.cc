#include "jaxprof/formats/chrome_trace/event_fields.h"

#include "jaxprof/formats/chrome_trace/json_value_check.h"

namespace jaxprof::chrome_trace {

namespace od = simdjson::ondemand;

namespace {

// A pid or tid written as a string names the process or thread by its text.
std::string_view unquote(std::string_view s) {
  return s.size() >= 2 && s.front() == '"' ? s.substr(1, s.size() - 2) : s;
}

}  // namespace

simdjson::error_code EventFieldReader::read(od::value& v, Fields& f) {
  member_ = {};
  bad_unread_ = false;
  od::object obj;
  auto code = v.get_object().get(obj);
  if (code) return code;
  for (auto member : obj) {
    od::field field;
    std::string_view key;
    if ((code = std::move(member).get(field))) return code;
    if ((code = field.unescaped_key().get(key))) return code;
    member_ = key;
    od::value& value = field.value();
    if (key == "ph") {
      std::string_view ph;
      if ((code = value.get_string().get(ph))) return code;
      f.ph = ph.empty() ? '?' : ph[0];
    } else if (key == "ts") {
      if ((code = scalar_token(value, f.ts, /*check=*/false))) return code;
      f.has_ts = true;
    } else if (key == "dur") {
      if ((code = scalar_token(value, f.dur, /*check=*/false))) return code;
      f.has_dur = true;
    } else if (key == "pid") {
      if ((code = scalar_token(value, f.pid))) return code;
      f.pid = unquote(f.pid);
    } else if (key == "tid") {
      if ((code = scalar_token(value, f.tid))) return code;
      f.tid = unquote(f.tid);
    } else if (key == "name") {
      if ((code = value.get_string().get(f.name))) return code;
    } else if (key == "args") {
      if ((code = read_args(value, f))) return code;
    } else if ((code = check_unread(value))) {
      return code;
    }
  }
  return simdjson::SUCCESS;
}

// The "args" member: the args the import reads, each checked; the others checked as JSON.
simdjson::error_code EventFieldReader::read_args(od::value& value, Fields& f) {
  od::object args;
  auto code = value.get_object().get(args);
  if (code) return code;
  f.has_args = true;
  for (auto arg_member : args) {
    od::field arg;
    std::string_view arg_key;
    if ((code = std::move(arg_member).get(arg))) return code;
    if ((code = arg.unescaped_key().get(arg_key))) return code;
    member_ = arg_key;
    cache_->intern(*strings_, arg_key);
    od::value& arg_value = arg.value();
    if (arg_key == "hlo_op") {
      if ((code = arg_value.get_string().get(f.hlo_op))) return code;
    } else if (arg_key == "hlo_module") {
      if ((code = arg_value.get_string().get(f.hlo_module))) return code;
    } else if (arg_key == "long_name") {
      if ((code = arg_value.get_string().get(f.long_name))) return code;
    } else if (arg_key == "program_id") {
      if ((code = scalar_token(arg_value, f.program_id))) return code;
    } else if (arg_key == "device_offset_ps") {
      if ((code = scalar_token(arg_value, f.device_offset))) return code;
    } else if (arg_key == "device_duration_ps") {
      if ((code = scalar_token(arg_value, f.device_duration))) return code;
    } else if (arg_key == "name") {
      // process_name / thread_name metadata; a non-string is not a name.
      std::string_view s;
      if (arg_value.get_string().get(s) == simdjson::SUCCESS)
        f.arg_name = s;
      else if ((code = check_unread(arg_value)))
        return code;
    } else if (f.ph != 'M' || !read_export_arg(arg_key, arg_value, f)) {
      if ((code = check_unread(arg_value))) return code;
    }
  }
  return simdjson::SUCCESS;
}

// SUCCESS when `text` is one JSON value; else an error that parse_window's message says is in
// the member read, at the value's start.
simdjson::error_code EventFieldReader::not_json(std::string_view text) {
  if (is_json_value(text)) return simdjson::SUCCESS;
  bad_unread_ = true;
  bad_value_ = text.data();
  return simdjson::TAPE_ERROR;
}

// A scalar member read from its text (a number, or an id that may be quoted): the text,
// checked (On Demand does not check a token it is not asked to convert). A container is the
// wrong type.
simdjson::error_code EventFieldReader::scalar_token(od::value& value, std::string_view& out,
                                                    bool check) {
  out = trim(value.raw_json_token());
  if (!out.empty() && (out[0] == '{' || out[0] == '[')) return simdjson::INCORRECT_TYPE;
  return check ? not_json(out) : simdjson::SUCCESS;
}

// A member the import does not read. On Demand skips it by counting brackets and never looks
// inside, so it is checked here: a file broken there is refused, not read as if it were
// sound (json_value_check.h).
simdjson::error_code EventFieldReader::check_unread(od::value& value) {
  std::string_view text = value.raw_json_token();
  if (!text.empty() && text[0] == '{') {
    od::object o;
    if (auto code = value.get_object().get(o)) return code;
    if (auto code = o.raw_json().get(text)) return code;
  } else if (!text.empty() && text[0] == '[') {
    od::array a;
    if (auto code = value.get_array().get(a)) return code;
    if (auto code = a.raw_json().get(text)) return code;
  }
  return not_json(text);
}

// The metadata members jaxprof's exports add. Returns false for a member it does not read
// (another key, or a value of another type: ignored, as the caller checks).
bool EventFieldReader::read_export_arg(std::string_view key, od::value& value, Fields& f) {
  std::string_view text;
  bool flag = false;
  if (key == "host" && value.get_string().get(text) == simdjson::SUCCESS) {
    f.arg_host = text;
  } else if (key == "proto" && value.get_string().get(text) == simdjson::SUCCESS) {
    f.proto = text;
  } else if (key == "jaxprof_derived" && value.get_bool().get(flag) == simdjson::SUCCESS) {
    f.derived = flag;
  } else if (key == "bare_module" && value.get_bool().get(flag) == simdjson::SUCCESS) {
    f.bare_module = flag;
  } else {
    return false;
  }
  return true;
}

}  // namespace jaxprof::chrome_trace
