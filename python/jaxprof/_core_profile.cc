// Loading a profile (from paths or bytes) and what it holds: its hosts, planes, lines and devices,
// and its event columns as NumPy arrays.
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "_core.h"
#include "jaxprof/analysis/ops/device_events.h"
#include "jaxprof/formats/load.h"
#include "jaxprof/formats/xplane/xplane.h"
#include "jaxprof/render/text/input_render.h"

namespace jaxprof::python {

using namespace nb::literals;

namespace {

template <typename T>
using View = nb::ndarray<nb::numpy, const T, nb::ndim<1>>;
template <typename T>
using Owned = nb::ndarray<nb::numpy, T, nb::ndim<1>>;

template <typename T>
View<T> view(PyProfile& self, const Column<T>& col) {
  // The owner is the Python Profile object: the array keeps it (and so the column) alive.
  return View<T>(col.data(), {col.size()}, nb::find(&self));
}

template <typename T>
Owned<T> owned(std::vector<T>&& values) {
  auto* heap = new std::vector<T>(std::move(values));
  nb::capsule owner(heap, [](void* p) noexcept { delete static_cast<std::vector<T>*>(p); });
  return Owned<T>(heap->data(), {heap->size()}, owner);
}

std::unique_ptr<PyProfile> load(std::vector<std::string> paths, std::string session,
                                std::vector<std::string> hosts) {
  auto p = std::make_unique<PyProfile>();
  nb::gil_scoped_release release;
  LoadOptions options;
  options.session = std::move(session);
  options.hosts = std::move(hosts);
  load_profile(paths, options, p->loaded);
  return p;
}

std::unique_ptr<PyProfile> from_bytes(nb::bytes data, std::string name) {
  std::vector<uint8_t> bytes(data.size());
  std::memcpy(bytes.data(), data.c_str(), data.size());
  auto p = std::make_unique<PyProfile>();
  nb::gil_scoped_release release;
  std::string label = "<bytes:" + name + ">";
  if (has_gzip_magic(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size())))
    bytes = gunzip(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()),
                   label, size_t(1) << 36);
  auto buffer = Buffer::from_bytes(std::move(bytes), label);
  Profile& profile = p->loaded.profile;
  import_xspace(profile, buffer, name);
  index_hlo_from_metadata(profile);
  finish_import(profile);
  return p;
}

nb::list planes(const PyProfile& self) {
  const Profile& pr = self.profile();
  nb::list out;
  for (size_t i = 0; i < pr.planes.size(); ++i) {
    const Plane& p = pr.planes[i];
    uint64_t events = 0;
    for (uint32_t l : p.lines) events += pr.lines[l].event_count;
    nb::dict d;
    d["index"] = i;
    d["name"] = std::string(pr.str(p.name));
    d["id"] = p.id;
    d["kind"] = plane_kind_name(p.kind);
    d["host"] = pr.hosts[p.host].name;
    d["lines"] = p.lines.size();
    d["events"] = events;
    out.append(d);
  }
  return out;
}

nb::list lines(const PyProfile& self) {
  const Profile& pr = self.profile();
  nb::list out;
  for (size_t i = 0; i < pr.lines.size(); ++i) {
    const Line& l = pr.lines[i];
    out.append(
        nb::make_tuple(l.plane, std::string(pr.str(l.name)), l.id, l.first_event, l.event_count));
  }
  return out;
}

nb::list devices(PyProfile& self) {
  std::vector<DeviceLines> devs;
  {
    nb::gil_scoped_release release;
    std::lock_guard lock(self.mu);
    devs = op_devices(self.profile());
  }
  const Profile& pr = self.profile();
  nb::list out;
  for (const DeviceLines& d : devs) {
    nb::dict row;
    row["name"] = d.name;
    row["host"] = pr.hosts[pr.planes[d.plane].host].name;
    row["plane"] = d.plane;
    row["lines"] = d.lines.size();
    out.append(row);
  }
  return out;
}

// Indices of a device's op events, in line order (each line start-sorted).
Owned<uint32_t> device_events(PyProfile& self, uint32_t plane, const std::string& name) {
  std::vector<uint32_t> idx;
  bool found = false;
  {
    nb::gil_scoped_release release;
    std::lock_guard lock(self.mu);
    const Profile& pr = self.profile();
    for (const DeviceLines& d : op_devices(pr)) {
      if (d.plane != plane || d.name != name) continue;
      found = true;
      pr.require_lines(d.lines);
      for (uint32_t li : d.lines) {
        const Line& l = pr.lines[li];
        for (uint32_t e = l.first_event; e < l.first_event + l.event_count; ++e)
          if (d.counts(pr.events, e)) idx.push_back(e);
      }
    }
  }
  if (!found) throw nb::key_error(("no device " + name).c_str());
  return owned(std::move(idx));
}

void require_all(PyProfile& self) {
  nb::gil_scoped_release release;
  std::lock_guard lock(self.mu);
  self.profile().require_all_lines();
}

void require_plane(PyProfile& self, uint32_t plane) {
  if (plane >= self.profile().planes.size()) throw nb::index_error("plane index out of range");
  nb::gil_scoped_release release;
  std::lock_guard lock(self.mu);
  self.profile().require_lines(self.profile().planes[plane].lines);
}

nb::list string_list(const Profile& pr, size_t n, auto&& at) {
  nb::list out;
  for (size_t i = 0; i < n; ++i) {
    std::string_view s = at(i);
    // Names come from the file: decode leniently rather than fail on bad UTF-8.
    out.append(nb::steal(PyUnicode_DecodeUTF8(s.data(), Py_ssize_t(s.size()), "replace")));
  }
  (void)pr;
  return out;
}

// What was read (the CLI's "input" JSON member).
std::string input_json(const PyProfile& self) { return render_input_json(self.loaded.files); }

}  // namespace

void bind_profile(nb::module_& m) {
  nb::class_<PyProfile>(m, "Profile")
      .def_prop_ro("num_events", [](const PyProfile& s) { return s.profile().events.size(); })
      .def_prop_ro("base_ns", [](const PyProfile& s) { return s.profile().base_ns; })
      .def_prop_ro("hosts",
                   [](const PyProfile& s) {
                     std::vector<std::tuple<std::string, std::string>> out;
                     for (const Host& h : s.profile().hosts) out.emplace_back(h.name, h.path);
                     return out;
                   })
      .def_prop_ro("warnings", [](const PyProfile& s) { return s.profile().warnings; })
      .def_prop_ro("errors", [](const PyProfile& s) { return s.profile().errors; })
      .def("planes", &planes)
      .def("lines", &lines)
      .def("devices", &devices)
      .def("device_events", &device_events, "plane"_a, "name"_a)
      .def("require_all", &require_all)
      .def("require_plane", &require_plane, "plane"_a)
      .def("start_ps", [](PyProfile& s) { return view(s, s.profile().events.start_ps); })
      .def("duration_ps", [](PyProfile& s) { return view(s, s.profile().events.duration_ps); })
      .def("op_duration_ps",
           [](PyProfile& s) {
             // The ops' own durations: the device clock where events carry it (a copy).
             const Profile& pr = s.profile();
             std::vector<int64_t> out(pr.events.duration_ps.begin(), pr.events.duration_ps.end());
             for (const Line& line : pr.lines)
               if (line.decoded && line.device_clock)
                 for (uint32_t e = line.first_event; e < line.first_event + line.event_count; ++e)
                   out[e] = pr.events.op_duration_ps(line, e);
             return owned(std::move(out));
           })
      .def("metadata", [](PyProfile& s) { return view(s, s.profile().events.metadata); })
      .def("hlo_op", [](PyProfile& s) { return view(s, s.profile().events.hlo_op); })
      .def("module", [](PyProfile& s) { return view(s, s.profile().events.module); })
      .def("metadata_names",
           [](const PyProfile& s) {
             const Profile& pr = s.profile();
             return string_list(pr, pr.event_metadata.size(),
                                [&](size_t i) { return pr.str(pr.event_metadata[i].name); });
           })
      .def("strings",
           [](const PyProfile& s) {
             const Profile& pr = s.profile();
             return string_list(pr, pr.strings.size(), [&](size_t i) { return pr.strings[i]; });
           })
      .def("module_labels",
           [](const PyProfile& s) {
             const Profile& pr = s.profile();
             std::vector<std::string> out;
             out.emplace_back();  // 0 = no module
             for (size_t i = 1; i < pr.modules.size(); ++i)
               out.push_back(pr.module_label(uint32_t(i)));
             return out;
           })
      .def("input_json", &input_json)
      .def(
          "set_steady_state",
          [](PyProfile& s, bool include_autotuning, bool include_warmup) {
            s.steady = {.include_autotuning = include_autotuning, .include_warmup = include_warmup};
          },
          "include_autotuning"_a, "include_warmup"_a);

  m.def("load", &load, "paths"_a, "session"_a, "hosts"_a);
  m.def("from_bytes", &from_bytes, "data"_a, "name"_a);
}

}  // namespace jaxprof::python
