#include "jaxprof/model/partial/partial.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "jaxprof/common/error.h"

namespace jaxprof {

void DurationMoments::merge(const DurationMoments& o) {
  count += o.count;
  sum += o.sum;
  sum_sq += o.sum_sq;
  min = std::min(min, o.min);
  max = std::max(max, o.max);
}

double DurationMoments::mean() const {
  return count ? static_cast<double>(sum) / static_cast<double>(count) : 0;
}

double DurationMoments::std() const {
  if (count < 2) return 0;
  if (min < 0) {  // not a duration: the plain formula
    long double m = static_cast<long double>(sum) / count;
    long double v = static_cast<long double>(sum_sq) / count - m * m;
    return v > 0 ? static_cast<double>(std::sqrt(v)) : 0;
  }
  // With sum = q n + r (0 <= r < n): sum of (d - q)^2 = sum_sq - q (sum + r) exactly, a small
  // number, so the variance T/n - (r/n)^2 loses nothing to cancellation.
  using u128 = unsigned __int128;
  const u128 n = count, s = static_cast<u128>(sum);
  const u128 q = s / n, r = s % n;
  const u128 qs = q * (s + r);
  const u128 t = sum_sq > qs ? sum_sq - qs : 0;
  long double rn = static_cast<long double>(r) / static_cast<long double>(count);
  long double v = static_cast<long double>(t) / static_cast<long double>(count) - rn * rn;
  return v > 0 ? static_cast<double>(std::sqrt(v)) : 0;
}

const char* step_source_name(StepSource s) {
  switch (s) {
    case StepSource::kHostAnnotation:
      return "host-annotation";
    case StepSource::kStepsLine:
      return "steps-line";
    case StepSource::kGroupId:
      return "group-id";
    case StepSource::kNone:
      return "none";
  }
  return "none";
}

uint32_t PartialStrings::id(std::string_view s) {
  if (s.empty()) return 0;
  if (index_.empty() && strings_.size() > 1)  // read from a file: index on first use
    for (uint32_t i = 1; i < strings_.size(); ++i) index_.emplace(strings_[i], i);
  auto [it, added] = index_.try_emplace(std::string(s), static_cast<uint32_t>(strings_.size()));
  if (added) strings_.emplace_back(s);
  return it->second;
}

void PartialStrings::assign(std::vector<std::string> strings) {
  strings_ = std::move(strings);
  if (strings_.empty()) strings_.emplace_back();
  index_.clear();
}

uint32_t HostPartial::module_id(std::string_view name, ProgramId program) {
  if (modules.empty()) modules.emplace_back();
  if (name.empty() && program == kNoProgram) return 0;
  if (module_index_.empty())
    for (uint32_t i = 1; i < modules.size(); ++i)
      module_index_.emplace(fmt::format("{}\n{}", modules[i].program_id, str(modules[i].name)), i);
  auto [it, added] = module_index_.try_emplace(fmt::format("{}\n{}", program, name),
                                               static_cast<uint32_t>(modules.size()));
  if (added) modules.push_back({strings.id(name), program});
  return it->second;
}

uint32_t HostPartial::op_info_id(const PartialOpInfo& info) {
  uint64_t key = (uint64_t{info.opcode} * 1000003u + info.op_name) * 1000003u + info.source;
  key = key * 1000003u + info.category;
  std::vector<uint32_t>& same = info_index_[key];
  for (uint32_t i : same)
    if (op_infos[i] == info) return i;
  same.push_back(static_cast<uint32_t>(op_infos.size()));
  op_infos.push_back(info);
  return same.back();
}

namespace {

// A set's hosts are ordered by name, then path.
bool set_order(const HostPartial& a, const HostPartial& b) {
  return a.host != b.host ? a.host < b.host : a.path < b.path;
}

}  // namespace

HostPartial head_of(const HostPartial& w) {
  HostPartial h;
  h.version = w.version;
  h.parts = w.parts;
  h.host = w.host;
  h.path = w.path;
  h.base_ns = w.base_ns;
  h.file_bytes = w.file_bytes;
  h.cpu_backend = w.cpu_backend;
  h.captured_on = w.captured_on;
  h.gpu = w.gpu;
  h.tpu = w.tpu;
  h.steady = w.steady;
  h.warnings = w.warnings;
  h.op_capped = w.op_capped;
  h.partial_file = w.partial_file;
  h.devices.reserve(w.devices.size());
  for (const PartialDevice& d : w.devices) {
    PartialDevice& x = h.devices.emplace_back();
    x.name = d.name;
    x.plane = d.plane;
    x.op_events = d.op_events;
    x.op_selected = d.op_selected;
    x.op_device_clock_events = d.op_device_clock_events;
    x.op_set_apart = d.op_set_apart;
    x.op_busy_ps = d.op_busy_ps;
    x.op_span_ps = d.op_span_ps;
    x.timeline = d.timeline;
    x.execution_source = d.execution_source;
  }
  return h;
}

void PartialSet::add(std::vector<HostPartial> more) {
  if (store_) {  // hosts held in a store join the others whole
    decode_all();
    hosts_ = std::move(whole_->hosts);
    whole_.reset();
    store_.reset();
    store_ids_.clear();
  }
  for (HostPartial& h : more) {
    if (h.modules.empty()) h.modules.emplace_back();
    sums_.add(h);
    hosts_.push_back(std::move(h));
  }
  std::stable_sort(hosts_.begin(), hosts_.end(), set_order);
  index();
}

void PartialSet::add_stored(std::shared_ptr<const PartialHostStore> store,
                            const std::vector<size_t>& ids) {
  if (!hosts_.empty() || store_) {  // into a set that has hosts: as whole hosts
    std::vector<HostPartial> more;
    for (size_t id : ids) more.push_back(store->load(id));
    add(std::move(more));
    return;
  }
  std::vector<std::pair<HostPartial, size_t>> heads;
  for (size_t id : ids) {
    HostPartial h = store->load(id);
    sums_.add(h);
    heads.emplace_back(head_of(h), id);
  }
  std::stable_sort(heads.begin(), heads.end(),
                   [](const auto& a, const auto& b) { return set_order(a.first, b.first); });
  for (auto& [h, id] : heads) {
    hosts_.push_back(std::move(h));
    store_ids_.push_back(id);
  }
  store_ = std::move(store);
  whole_ = std::make_shared<Whole>();
  index();
}

void PartialSet::merge(PartialSet other) {
  if (other.store_)
    add(std::vector<HostPartial>(other.hosts()));
  else
    add(std::move(other.hosts_));
}

HostPartial PartialSet::load(uint32_t i, uint32_t parts) const {
  HostPartial h = store_->load(store_ids_[i], parts);
  if (h.modules.empty()) h.modules.emplace_back();
  // What is never in a file comes from the head.
  h.partial_file = hosts_[i].partial_file;
  h.op_capped = hosts_[i].op_capped;
  h.warnings = hosts_[i].warnings;
  return h;
}

void PartialSet::decode_all() const {
  std::call_once(whole_->once, [&] {
    whole_->hosts.reserve(hosts_.size());
    for (uint32_t i = 0; i < hosts_.size(); ++i) whole_->hosts.push_back(load(i));
    whole_->done = true;
  });
}

const std::vector<HostPartial>& PartialSet::hosts() const {
  if (!store_) return hosts_;
  decode_all();
  return whole_->hosts;
}

void PartialSet::for_each_host(const std::function<void(uint32_t, const HostPartial&)>& fn,
                               uint32_t parts) const {
  const bool decode = store_ && !decoded_all();
  for (uint32_t i = 0; i < hosts_.size(); ++i) {
    if (decode) {
      const HostPartial h = load(i, parts);
      fn(i, h);
    } else {
      fn(i, hosts()[i]);
    }
  }
}

void PartialSet::for_each_device(
    const std::function<void(const DeviceRef&, const HostPartial&, const PartialDevice&)>& fn,
    uint32_t parts) const {
  for_each_host(
      [&](uint32_t hi, const HostPartial& h) {
        if (!counted_[hi]) return;
        for (uint32_t di = 0; di < h.devices.size(); ++di) fn({hi, di}, h, h.devices[di]);
      },
      parts);
}

void PartialSet::index() {
  for (size_t i = 1; i < hosts_.size(); ++i)
    if (hosts_[i].host == hosts_[i - 1].host && hosts_[i].path == hosts_[i - 1].path)
      throw InputError(hosts_[i].path,
                       fmt::format("host {} is given twice (the same file, or two partials of it)",
                                   hosts_[i].host));
  base_ns_ = 0;
  if (!hosts_.empty()) {
    base_ns_ = hosts_.front().base_ns;
    for (const HostPartial& h : hosts_) base_ns_ = std::min(base_ns_, h.base_ns);
    // Times on one clock are picoseconds in int64: hosts more than 2^61 ps (26 days) apart are
    // not one capture, and with a host's own times (at most 2^56 ps) they would overflow it.
    constexpr int64_t kMostApartNs = (int64_t{1} << 61) / 1000;
    for (const HostPartial& h : hosts_)
      if (h.base_ns - base_ns_ > kMostApartNs)
        throw InputError(h.path, fmt::format("host {} starts {} days after the first host: not "
                                             "the same capture",
                                             h.host, (h.base_ns - base_ns_) / 86'400'000'000'000));
  }
  bool device_planes = false;
  for (const HostPartial& h : hosts_) device_planes |= !h.cpu_backend && !h.devices.empty();
  devices_.clear();
  counted_.assign(hosts_.size(), false);
  for (uint32_t hi = 0; hi < hosts_.size(); ++hi) {
    if (device_planes && hosts_[hi].cpu_backend) continue;
    counted_[hi] = true;
    for (uint32_t di = 0; di < hosts_[hi].devices.size(); ++di) devices_.push_back({hi, di});
  }
}

uint32_t PartialSet::parts() const {
  uint32_t parts = hosts_.empty() ? 0 : ~0u;
  for (const HostPartial& h : hosts_) parts &= h.parts;
  return parts;
}

void PartialSet::require(uint32_t parts, std::string_view command) const {
  for (const HostPartial& h : hosts_)
    if ((h.parts & parts) != parts)
      throw InputError(h.path, fmt::format("the partial of host {} lacks what {} needs: write it "
                                           "again with `jaxprof partial`",
                                           h.host, command));
}

void PartialSet::require_any(uint32_t parts, std::string_view command) const {
  for (const HostPartial& h : hosts_)
    if ((h.parts & parts) == 0)
      throw InputError(h.path, fmt::format("the partial of host {} lacks what {} needs: write it "
                                           "again with `jaxprof partial`",
                                           h.host, command));
}

void PartialSet::require_steady(const SteadyStateOptions& steady, std::string_view command) const {
  auto flags = [](const SteadyStateOptions& o) {
    std::string f;
    if (o.include_autotuning) f += " --include-autotuning";
    if (o.include_warmup) f += " --include-warmup";
    return f.empty() ? std::string(" (no steady-state flags)") : f;
  };
  for (const HostPartial& h : hosts_) {
    if (!h.steady.known)
      throw InputError(h.path, fmt::format("the partial of host {} does not say what it set apart "
                                           "from the steady state: write it again with `jaxprof "
                                           "partial`",
                                           h.host));
    if (h.steady.options != steady)
      throw InputError(h.path,
                       fmt::format("the partial of host {} was written with{}, but {} was asked "
                                   "with{}: write it again with `jaxprof partial`{}",
                                   h.host, flags(h.steady.options), command, flags(steady),
                                   steady == SteadyStateOptions{} ? "" : flags(steady)));
  }
}

}  // namespace jaxprof
