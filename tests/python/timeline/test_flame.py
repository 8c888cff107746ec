"""`jaxprof flame`: the folded output against an independent computation from the oracle's
XSpace loaders (its own HloProto descriptor for op paths and fusions), and the SVG's safety:
well-formed XML, nothing external, untrusted names escaped; optionally rendered by a headless
Chromium."""
from __future__ import annotations

import os
import shutil
import subprocess
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import pytest
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

import ops_check
import xplane_oracle as xo
from xspace_builder import Ref, SpaceBuilder

# ---------------------------------------------------------------------------
# HloProto, only the parts the flamegraph reads (field numbers of XLA's hlo.proto).
# ---------------------------------------------------------------------------

_F = descriptor_pb2.FieldDescriptorProto
_PKG = "jaxprof_flame_test.hlo"


def _hlo_classes():
    fd = descriptor_pb2.FileDescriptorProto(name="jaxprof_flame_test_hlo.proto", package=_PKG,
                                            syntax="proto3")

    def msg(name, fields):
        m = fd.message_type.add(name=name)
        for fname, number, ftype, rep, tname in fields:
            f = m.field.add(name=fname, number=number, type=ftype,
                            label=_F.LABEL_REPEATED if rep else _F.LABEL_OPTIONAL)
            if tname:
                f.type_name = f".{_PKG}.{tname}"

    M, S, I64, I32 = _F.TYPE_MESSAGE, _F.TYPE_STRING, _F.TYPE_INT64, _F.TYPE_INT32
    msg("HloProto", [("hlo_module", 1, M, False, "HloModuleProto")])
    msg("HloModuleProto", [("name", 1, S, False, None),
                           ("computations", 3, M, True, "HloComputationProto")])
    msg("HloComputationProto", [("name", 1, S, False, None),
                                ("instructions", 2, M, True, "HloInstructionProto"),
                                ("id", 5, I64, False, None)])
    msg("OpMetadata", [("op_name", 2, S, False, None), ("source_file", 3, S, False, None),
                       ("source_line", 4, I32, False, None),
                       ("stack_frame_id", 15, I32, False, None)])
    msg("HloInstructionProto", [("name", 1, S, False, None), ("opcode", 2, S, False, None),
                                ("metadata", 7, M, False, "OpMetadata"),
                                ("called_computation_ids", 38, I64, True, None)])
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fd)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{_PKG}.HloProto"))


HloProto = _hlo_classes()

# ---------------------------------------------------------------------------
# The independent computation
# ---------------------------------------------------------------------------


def _line_pieces(events, device_clock=False) -> List[Tuple[int, int, object]]:
    """Elementary segments of one line, each given to the innermost covering event: the latest in
    (start, longest first, file order). On the device's own clock when asked (a TPU op line)."""
    if device_clock:
        start, dur = (lambda e: e.op_start_ps), (lambda e: e.op_dur_ps)
    else:
        start, dur = (lambda e: e.start_ps), (lambda e: e.dur_ps)
    evs = sorted((e for e in events if dur(e) > 0), key=lambda e: (start(e), -dur(e), e.order))
    rank = {id(e): i for i, e in enumerate(evs)}
    bounds = sorted({t for e in evs for t in (start(e), start(e) + dur(e))})
    pieces, active, k = [], [], 0
    for a, b in zip(bounds, bounds[1:]):
        while k < len(evs) and start(evs[k]) <= a:
            active.append(evs[k])
            k += 1
        active = [e for e in active if start(e) + dur(e) > a]
        if active:
            top = max(active, key=lambda e: rank[id(e)])
            if pieces and pieces[-1][2] is top and pieces[-1][1] == a:
                pieces[-1] = (pieces[-1][0], b, top)
            else:
                pieces.append((a, b, top))
    return pieces


def _shares(lines) -> Dict[int, Tuple[object, int]]:
    """Busy time per event: an instant covered by k lines is split equally, the leftover
    picoseconds one each to the earlier lines."""
    # One op line whose events carry the device clock (TPU) is measured on that clock.
    device_clock = len(lines) == 1 and any(e.device_dur_ps is not None for e in lines[0])
    per_line = [_line_pieces(evs, device_clock) for evs in lines]
    per_line = [p for p in per_line if p]
    out: Dict[int, list] = {}
    bounds = sorted({t for p in per_line for a, b, _ in p for t in (a, b)})
    idx = [0] * len(per_line)
    for a, b in zip(bounds, bounds[1:]):
        cover = []
        for li, pieces in enumerate(per_line):
            while idx[li] < len(pieces) and pieces[idx[li]][1] <= a:
                idx[li] += 1
            if idx[li] < len(pieces) and pieces[idx[li]][0] <= a:
                cover.append(pieces[idx[li]][2])
        if not cover:
            continue
        q, r = divmod(b - a, len(cover))
        for i, e in enumerate(cover):
            out.setdefault(id(e), [e, 0])[1] += q + (1 if i < r else 0)
    return out


def _devices(path: Path):
    """(device, [line events...]) per device, lines in file order; events carry a `stat_md`-free
    op name, module and program id."""
    files = xo.profile_files(str(path))
    spaces = [(xo.host_of_file(f), xo.load_xspace(f)) for f in files]
    base = xo._base_ns([s for _, s in spaces])
    out = []
    for host, space in spaces:
        found = []
        for plane in space.planes:
            if not plane.name.startswith("/device:"):
                continue
            stats = xo._PlaneStats(plane)
            lines = []
            for _, xls in xo._merged_lines(plane):
                if not xo._line_is_counted(xls):
                    continue
                evs, k = [], 0
                for xl in xls:
                    for ev in xl.events:
                        evs.append(xo._make_event(xl, ev, k, base, stats))
                        k += 1
                if evs:
                    lines.append(evs)
            if lines:
                found.append((plane.name, lines))
        if not found:  # CPU backend: hlo_op events of /host:CPU, one device per device_ordinal
            for plane in space.planes:
                if plane.name != "/host:CPU":
                    continue
                stats = xo._PlaneStats(plane)
                by_dev: Dict[Optional[int], list] = {}
                for _, xls in xo._merged_lines(plane):
                    per: Dict[Optional[int], list] = {}
                    k = 0
                    for xl in xls:
                        for ev in xl.events:
                            e = xo._make_event(xl, ev, k, base, stats)
                            k += 1
                            if e.hlo_op is not None:
                                per.setdefault(e.device_ordinal, []).append(e)
                    for o, evs in per.items():
                        by_dev.setdefault(o, []).append(evs)
                for o in sorted(by_dev, key=lambda o: -1 if o is None else o):
                    found.append((plane.name if o is None else f"/device:CPU:{o}", by_dev[o]))
        names = [(e) for _, lines in found for evs in lines for e in evs]
        xo._name_modules_by_program_id(space, [xo.DeviceResult("", "", 0, 0, names)])
        out.append((space, found))
    return out


def _hlo_modules(space):
    """(by program id, by name) -> parsed HloModuleProto, as the profile's metadata holds them."""
    by_pid, by_name = {}, defaultdict(list)
    for plane in space.planes:
        if plane.name != "/host:metadata":
            continue
        stats = xo._PlaneStats(plane)
        for key in plane.event_metadata:
            st = stats.metadata_stats(key)
            blob = st.get("Hlo Proto")
            if not isinstance(blob, bytes):
                continue
            proto = HloProto()
            proto.ParseFromString(blob)
            pid = xo._as_int(st.get("program_id"))
            pid = (key if pid is None else pid) % (1 << 64)
            if pid not in by_pid:
                by_pid[pid] = proto.hlo_module
                by_name[proto.hlo_module.name].append(proto.hlo_module)
    return by_pid, by_name


def _has_metadata(instr) -> bool:
    m = instr.metadata
    return bool(m.op_name or m.source_file or m.stack_frame_id)


def _fused(module, instr, depth=0) -> list:
    comps = {c.id: c for c in module.computations}
    out = []
    for cid in instr.called_computation_ids:
        for i in comps[cid].instructions if cid in comps else []:
            if i.opcode == "fusion" and depth < 16:
                inner = _fused(module, i, depth + 1)
                if inner:
                    out += inner
                    continue
            if _has_metadata(i):
                out.append(i)
    return out


def split_top_level(name: str, sep: str) -> List[str]:
    parts, depth, cur = [], 0, ""
    for c in name:
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth = max(0, depth - 1)
        if c == sep and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += c
    parts.append(cur)
    return [p for p in parts if p]


def expected_folded(path: Path, by: str) -> Dict[str, int]:
    """Folded stack -> picoseconds, without idle frames (`--no-idle`)."""
    out: Dict[str, int] = defaultdict(int)
    spaces = _devices(path)
    pairs = {(e.hlo_module, e.program_id) for _, found in spaces for _, lines in found
             for evs in lines for e in evs if e.hlo_module is not None}
    names = defaultdict(set)
    for n, pid in pairs:
        names[n].add(pid)
    for space, found in spaces:
        by_pid, by_name = _hlo_modules(space)
        for device, lines in found:
            per_key: Dict[tuple, int] = defaultdict(int)
            for e, w in _shares(lines).values():
                op = xo._hlo_op_name(e)
                key = (e.hlo_module, e.program_id, op if op is not None else e.display,
                       op is not None)
                per_key[key] += w
            for (module, pid, op, is_hlo), w in sorted(per_key.items(), key=str):
                if by == "module":
                    label = "(no module)" if module is None else (
                        f"{module}({pid % (1 << 64)})" if len(names[module]) > 1 else module)
                    out[f"{device};{label};{op}"] += w
                    continue
                mod = by_pid.get(pid % (1 << 64)) if pid is not None else None
                # By name only for events without a program id: a lookup never borrows
                # another program's HLO.
                if mod is None and pid is None and module is not None and \
                        len(by_name.get(module, [])) == 1:
                    mod = by_name[module][0]
                instr = None
                if mod is not None and is_hlo:
                    instr = next((i for c in mod.computations for i in c.instructions
                                  if i.name == op), None)
                leaves = _fused(mod, instr) if instr is not None and instr.opcode == "fusion" \
                    else []
                leaves = leaves or [instr]
                # XLA joins the op names of merged instructions with ';': each is a share.
                paths = []
                for leaf in leaves:
                    names = split_top_level(leaf.metadata.op_name, ";") if leaf is not None else []
                    paths += [split_top_level(n, "/") for n in names] or [[]]
                q, r = divmod(w, len(paths))
                for i, frames in enumerate(paths):
                    share = q + (1 if i < r else 0)
                    if share:
                        out[";".join([device] + frames + [op])] += share
    return dict(out)


def parse_folded(text: str) -> Dict[str, int]:
    out: Dict[str, int] = defaultdict(int)
    for line in text.splitlines():
        stack, weight = line.rsplit(" ", 1)
        out[stack] += int(weight)
    return dict(out)


def run(jaxprof_bin, *args) -> subprocess.CompletedProcess:
    # Against raw events: every event counts (the steady state is tested on its own).
    return subprocess.run([str(jaxprof_bin), "flame", *map(str, args), *ops_check.EVERYTHING],
                          capture_output=True, text=True, timeout=ops_check.CLI_TIMEOUT_S)


# The op-name check needs op paths without tf_op fallbacks: profiles whose op paths all come
# from HloProtos.
CASES = [("data-jax_cpu_matmul", ops_check.DATA_DIR / "jax_cpu_matmul", ("module", "op-name")),
         ("data-jax_cpu_8dev", ops_check.DATA_DIR / "jax_cpu_8dev", ("module", "op-name"))]
for _name in ("mi300x_jax_gemm", "mi300x_jax_elementwise", "mi300x_jax_conv",
              "tpu_4chip_inference"):
    CASES.append((_name, ops_check.XPLANE_FIXTURES / f"{_name}.xplane.pb", ("module", "op-name")))


@pytest.mark.parametrize("path,modes", [(p, m) for _, p, m in CASES], ids=[c[0] for c in CASES])
def test_folded_matches_independent_computation(jaxprof_bin, path, modes):
    ops_check.require_profile(path)
    for by in modes:
        r = run(jaxprof_bin, path, "--by", by, "--no-idle", "--folded", "-")
        assert r.returncode == 0, r.stderr
        got = parse_folded(r.stdout)
        want = expected_folded(path, by)
        assert got == want, by


def test_idle_frames_make_each_device_weigh_its_span(jaxprof_bin):
    path = ops_check.require_profile(ops_check.DATA_DIR / "jax_cpu_8dev")
    r = run(jaxprof_bin, path, "--idle", "--folded", "-")
    assert r.returncode == 0, r.stderr
    per_device: Dict[str, int] = defaultdict(int)
    for stack, w in parse_folded(r.stdout).items():
        per_device[stack.split(";", 1)[0]] += w
    spans = {d.device: d.span_ps for d in xo.analyze_path(str(path))}
    assert per_device == spans


def _check_svg_safe(text: str) -> ET.Element:
    root = ET.fromstring(text.encode())
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    for el in root.iter():
        for k, v in el.attrib.items():
            assert "href" not in k.lower(), (el.tag, k)
            assert "url(" not in v and "http" not in v.replace("http://www.w3.org/2000/svg", "")
        if el.tag.endswith("script"):
            assert set(el.attrib) <= {"type"}, "scripts are inline only"
    assert "@import" not in text and "@font-face" not in text
    return root


def test_svg_is_self_contained_xml(jaxprof_bin, tmp_path):
    path = ops_check.require_profile(ops_check.XPLANE_FIXTURES / "mi300x_jax_gemm.xplane.pb")
    out = tmp_path / "f.svg"
    r = run(jaxprof_bin, path, "-o", out)
    assert r.returncode == 0, r.stderr
    root = _check_svg_safe(out.read_text())
    ns = "{http://www.w3.org/2000/svg}"
    titles = [t.text for t in root.iter(ns + "title")]
    assert any(t.startswith("run_gemms (/workspace/traces/generate_gemm_trace.py:37)\n")
               for t in titles)
    assert any(t.startswith("custom-call.1\n3.219 ms") for t in titles)


def _hostile_profile(path: Path) -> None:
    """A GPU profile whose op and module names are markup."""
    space = SpaceBuilder()
    gpu = space.plane("/device:GPU:0")
    line = gpu.line(1, "Stream #1(Kernel)", timestamp_ns=1000)
    evil = "<script>alert('x')</script>&\"]]><x y='1'/>"
    md = gpu.event_md(evil, stats={"hlo_module": f"jit_{evil}"})
    gpu.event(line, md, offset_ps=0, duration_ps=5000, stats={"hlo_op": Ref(evil + ";b\nc")})
    md2 = gpu.event_md("plain")
    gpu.event(line, md2, offset_ps=6000, duration_ps=1000)
    space.write(path)


def test_untrusted_names_are_escaped(jaxprof_bin, tmp_path):
    prof = tmp_path / "evil.xplane.pb"
    _hostile_profile(prof)
    svg = tmp_path / "evil.svg"
    r = run(jaxprof_bin, prof, "--by", "module", "--idle", "-o", svg, "--folded",
            tmp_path / "f.txt", "--speedscope", tmp_path / "s.json")
    assert r.returncode == 0, r.stderr
    text = svg.read_text()
    root = _check_svg_safe(text)
    assert "<script>alert" not in text
    ns = "{http://www.w3.org/2000/svg}"
    assert len([e for e in root.iter(ns + "script")]) == 1  # only our own
    titles = [t.text for t in root.iter(ns + "title")]
    assert any(t.startswith("<script>alert('x')</script>&\"]]><x y='1'/>;b c\n") for t in titles)
    folded = parse_folded((tmp_path / "f.txt").read_text())
    assert folded == {
        "/device:GPU:0;jit_<script>alert('x')</script>&\"]]><x y='1'/>;"
        "<script>alert('x')</script>&\"]]><x y='1'/>:b c": 5000,
        "/device:GPU:0;(no module);plain": 1000,
        "/device:GPU:0;[idle between modules]": 1000}
    import json
    doc = json.loads((tmp_path / "s.json").read_text())
    assert doc["profiles"][0]["type"] == "sampled"
    assert sum(doc["profiles"][0]["weights"]) == 7.0  # ns


def _chromium() -> Optional[str]:
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return None


def test_svg_renders_in_headless_chromium(jaxprof_bin, tmp_path):
    browser = _chromium()
    if browser is None:
        pytest.skip("chromium is not installed (apt-get install -y chromium)")
    prof = tmp_path / "evil.xplane.pb"
    _hostile_profile(prof)
    svg = tmp_path / "evil.svg"
    assert run(jaxprof_bin, prof, "-o", svg).returncode == 0
    r = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu",
                        "--disable-background-networking", "--enable-logging=stderr", "--v=0",
                        f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom",
                        svg.as_uri()], capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, HOME=str(tmp_path)))
    assert r.returncode == 0, r.stderr[-2000:]
    assert 'data-ready="1"' in r.stdout, "the script did not run to its end"
    assert "Uncaught" not in r.stderr, r.stderr[-2000:]
    assert "<script>alert" not in r.stdout
