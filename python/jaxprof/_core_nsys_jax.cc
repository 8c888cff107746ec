#include "_core_nsys_jax.h"

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "jaxprof/analysis/flame/flame.h"
#include "jaxprof/model/hlo_index.h"
#include "jaxprof/render/flame/flame_svg.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace jaxprof {
namespace {

nb::list int_list(const std::vector<int64_t>& values) {
  nb::list out;
  for (int64_t v : values) out.append(v);
  return out;
}

// The module as dicts: instructions (with their computation's id), computations (with their
// instructions' names) and the stack frame table (1-based ids, as the HLO's).
nb::object module_dict(const HloModule& mod) {
  nb::dict d;
  d["name"] = std::string(mod.name);
  d["program_id"] = mod.program_id;
  nb::list instructions;
  for (const HloInstruction& in : mod.instructions) {
    nb::dict i;
    i["name"] = std::string(in.name);
    i["opcode"] = std::string(in.opcode);
    i["id"] = in.id;
    i["op_type"] = std::string(in.op_type);
    i["op_name"] = std::string(in.op_name);
    i["source_file"] = std::string(in.source_file);
    i["source_line"] = in.source_line;
    i["stack_frame_id"] = in.stack_frame_id;
    i["operand_ids"] = int_list(in.operand_ids);
    i["called_computation_ids"] = int_list(in.called_computation_ids);
    nb::list groups;
    for (const auto& g : in.replica_groups) groups.append(int_list(g));
    i["replica_groups"] = groups;
    i["computation_id"] = in.computation < mod.computations.size()
                              ? mod.computations[in.computation].id
                              : int64_t{-1};
    instructions.append(i);
  }
  d["instructions"] = instructions;
  nb::list computations;
  for (const HloComputation& c : mod.computations) {
    nb::dict cd;
    cd["name"] = std::string(c.name);
    cd["id"] = c.id;
    cd["root_id"] = c.root_id;
    nb::list names;
    for (uint32_t k : c.instructions) names.append(std::string(mod.instructions[k].name));
    cd["instructions"] = names;
    computations.append(cd);
  }
  d["computations"] = computations;
  nb::list frames;
  for (const HloStackFrame& f : mod.stack_frames)
    frames.append(nb::make_tuple(std::string(f.file), std::string(f.function), f.line, f.column,
                                 f.parent));
  d["stack_frames"] = frames;
  return d;
}

// A flame tree from (stack, weight) pairs: one node per distinct prefix, children by total
// descending then name, as compute_flame orders them.
FlameTree tree_of_stacks(const std::vector<std::vector<std::string>>& stacks,
                         const std::vector<double>& weights) {
  FlameTree tree;
  tree.nodes.push_back(FlameNode{.name = "all"});
  std::vector<std::map<std::string, uint32_t>> index(1);
  for (size_t s = 0; s < stacks.size(); ++s) {
    const auto ps = static_cast<int64_t>(std::llround(weights[s]));
    if (ps <= 0) continue;
    uint32_t node = 0;
    tree.nodes[0].total_ps += ps;
    for (const std::string& frame : stacks[s]) {
      auto [it, added] = index[node].try_emplace(frame, static_cast<uint32_t>(tree.nodes.size()));
      if (added) {
        const uint32_t depth = tree.nodes[node].depth + 1;
        tree.nodes.push_back(FlameNode{.name = frame,
                                       .kind = depth == 1 ? FrameKind::kDevice : FrameKind::kSource,
                                       .parent = node,
                                       .depth = depth});
        tree.nodes[node].children.push_back(it->second);
        index.emplace_back();
      }
      node = it->second;
      tree.nodes[node].total_ps += ps;
    }
    tree.nodes[node].self_ps += ps;
  }
  for (FlameNode& n : tree.nodes) {
    std::sort(n.children.begin(), n.children.end(), [&](uint32_t a, uint32_t b) {
      const FlameNode &x = tree.nodes[a], &y = tree.nodes[b];
      return x.total_ps != y.total_ps ? x.total_ps > y.total_ps : x.name < y.name;
    });
  }
  return tree;
}

}  // namespace

void bind_nsys_jax(nb::module_& m, ProfileAccessor access) {
  m.def(
      "hlo_module",
      [access](nb::handle profile, int64_t program_id, const std::string& name) -> nb::object {
        ProfileAccess a = access(profile);
        std::lock_guard lock(*a.mu);
        const HloModule* mod = a.profile->hlo.find(program_id, name);
        if (mod == nullptr) return nb::none();
        return module_dict(*mod);
      },
      "profile"_a, "program_id"_a, "name"_a = "",
      "The HLO module of a program id (else of a module name) as dicts; None when unknown.");
  m.def(
      "flame_svg_of_stacks",
      [](const std::vector<std::vector<std::string>>& stacks, const std::vector<double>& weights,
         const std::string& title, int width) {
        if (stacks.size() != weights.size())
          throw nb::value_error("stacks and weights differ in length");
        FlameTree tree = tree_of_stacks(stacks, weights);
        FlameSvgOptions o;
        o.title = title;
        o.width = width;
        nb::gil_scoped_release release;
        return render_flame_svg(tree, o);
      },
      "stacks"_a, "weights"_a, "title"_a, "width"_a,
      "An SVG flamegraph of weighted stacks (weights in the unit the frames should show as ps).");
}

}  // namespace jaxprof
