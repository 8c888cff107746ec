"""`jaxprof export --perfetto FILE.pftrace` writes Perfetto's protobuf trace format. An independent
reader (the protobuf package decoding perfetto_trace.proto, a subset of Perfetto's published
protos with their field numbers) finds the same events on every track as jaxprof's JSON export,
at the same times rounded down to Perfetto's nanoseconds, with the same string and integer args
(names and string values interned in the protobuf, the packets deflated in batches;
docs/export.md)."""
from __future__ import annotations

import json
import shutil
import subprocess
import zlib
from collections import defaultdict
from decimal import Decimal
from pathlib import Path

import pytest

import ops_check as oc

CASES = [("data-jax_cpu_8dev", oc.DATA_DIR / "jax_cpu_8dev")]
CASES += [(p.name.split(".", 1)[0], p) for p in oc.fixture_profiles()]
CASES += [(p.stem, p) for p in sorted((oc.SHARED_FIXTURES / "nsys-jax").glob("*.zip"))]


@pytest.fixture(scope="module")
def trace_class(tmp_path_factory):
    if shutil.which("protoc") is None:
        pytest.skip("protoc not installed")
    pytest.importorskip("google.protobuf")
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    proto = Path(__file__).with_name("perfetto_trace.proto")
    desc = tmp_path_factory.mktemp("proto") / "perfetto.desc"
    subprocess.run(["protoc", f"--proto_path={proto.parent}", f"--descriptor_set_out={desc}",
                    proto.name], check=True)
    pool = descriptor_pool.DescriptorPool()
    for f in descriptor_pb2.FileDescriptorSet.FromString(desc.read_bytes()).file:
        pool.Add(f)
    d = pool.FindMessageTypeByName("perfetto.protos.Trace")
    return (message_factory.GetMessageClass(d) if hasattr(message_factory, "GetMessageClass")
            else message_factory.MessageFactory(pool).GetPrototype(d))


def packets(cls, data):
    """The trace's packets, those deflated in a `compressed_packets` batch inflated in place
    (zlib, as Perfetto's trace processor reads them)."""
    out = []
    for p in cls.FromString(data).packet:
        if p.HasField("compressed_packets"):
            batch = packets(cls, zlib.decompress(p.compressed_packets))
            assert not any(q.HasField("compressed_packets") for q in batch)
            out += batch
        else:
            out.append(p)
    return out


def read_proto(cls, path):
    """{(process, track): [(name, begin_ns, end_ns, args)]}, counters, flows, from the packets;
    args: the sorted (key, value) pairs of the string and integer args."""
    trace = cls()
    trace.packet.extend(packets(cls, path.read_bytes()))
    tracks, processes, names, keys, values = {}, {}, {}, {}, {}
    slices, counters, open_ = defaultdict(list), defaultdict(list), defaultdict(list)
    flows_out, flows_in = set(), set()
    assert {p.trusted_packet_sequence_id for p in trace.packet} == {1}
    assert trace.packet[0].sequence_flags == 1  # the sequence starts with its state cleared
    for p in trace.packet:
        for n in p.interned_data.event_names:
            assert n.iid not in names
            names[n.iid] = n.name
        for n in p.interned_data.debug_annotation_names:
            assert n.iid not in keys
            keys[n.iid] = n.name
        for n in p.interned_data.debug_annotation_string_values:
            assert n.iid not in values
            values[n.iid] = n.str.decode()
        if p.HasField("track_descriptor"):
            t = p.track_descriptor
            if t.HasField("process"):
                processes[t.uuid] = t.process.process_name
            else:
                name = t.name.removesuffix(" (overlapping)")  # slices that overlap without nesting
                tracks[t.uuid] = (processes[t.parent_uuid], name, t.HasField("counter"))
        if not p.HasField("track_event"):
            continue
        e = p.track_event
        if e.type == e.TYPE_SLICE_BEGIN:
            args = []
            for a in e.debug_annotations:
                kind = a.WhichOneof("value")
                if kind in ("string_value_iid", "string_value", "int_value", "uint_value"):
                    v = values[a.string_value_iid] if kind == "string_value_iid" else \
                        getattr(a, kind)
                    args.append((keys[a.name_iid], v))
            open_[e.track_uuid].append((names[e.name_iid], p.timestamp, tuple(sorted(args))))
            flows_out.update(e.flow_ids)
            flows_in.update(e.terminating_flow_ids)
        elif e.type == e.TYPE_SLICE_END:
            name, begin, args = open_[e.track_uuid].pop()
            proc, track, _ = tracks[e.track_uuid]
            slices[proc, track].append((name, begin, p.timestamp, args))
        elif e.type == e.TYPE_COUNTER:
            proc, track, counter = tracks[e.track_uuid]
            assert counter
            value = e.counter_value if e.HasField("counter_value") else e.double_counter_value
            counters[proc, track].append((p.timestamp, value))
    return slices, counters, flows_out, flows_in


def read_json(path):
    trace = json.loads(path.read_bytes(), parse_float=Decimal)
    base = trace["otherData"]["base_ns"]
    events = trace["traceEvents"]
    procs = {e["pid"]: e["args"]["name"] + " (" + e["args"]["host"] + ")" for e in events
             if e["ph"] == "M" and e["name"] == "process_name" and e["pid"] > 0}
    threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in events
               if e["ph"] == "M" and e["name"] == "thread_name"}
    slices, counters = defaultdict(list), defaultdict(list)

    def ns(us):  # exact picoseconds, rounded down to nanoseconds
        return base + int(us * 10**6) // 1000

    for e in events:
        key = (procs.get(e["pid"]), threads.get((e["pid"], e["tid"])))
        if e["ph"] == "X":
            args = tuple(sorted((k, v) for k, v in e.get("args", {}).items()
                                if isinstance(v, (str, int)) and not isinstance(v, bool)))
            slices[key].append((e["name"], ns(e["ts"]), ns(e["ts"] + e["dur"]), args))
        elif e["ph"] == "C":
            [value] = e["args"].values()  # one series per counter track
            counters[key].append((ns(e["ts"]), value))
    # Launch arrows end on slices ("flow_in"); collective arrival arrows are flow events ("f").
    flows = sum(1 for e in events if e.get("flow_in") or e.get("ph") == "f")
    return slices, counters, flows


@pytest.mark.parametrize("name,path", CASES, ids=[c[0] for c in CASES])
def test_proto_holds_the_json_events(jaxprof_bin, tmp_path, trace_class, name, path):
    oc.require_profile(path)
    for out in ("t.json", "t.pftrace"):
        proc = oc.run_cli(jaxprof_bin, ["export", str(path), "--perfetto", str(tmp_path / out)])
        assert proc.returncode == 0, proc.stderr.decode()
    want, want_counters, want_flows = read_json(tmp_path / "t.json")
    got, got_counters, flows_out, flows_in = read_proto(trace_class, tmp_path / "t.pftrace")
    assert set(got) == set(want)
    for key in want:
        assert sorted(got[key]) == sorted(want[key]), (name, key)
    assert dict(got_counters) == dict(want_counters)
    assert len(flows_in) <= want_flows and flows_in <= flows_out
    assert bool(flows_in) == bool(want_flows)


def test_format_option_and_extension(jaxprof_bin, tmp_path):
    path = oc.require_profile(oc.DATA_DIR / "jax_cpu_matmul")
    for args, proto in ((["t.pftrace"], True), (["t.json"], False), (["t.json.gz"], False),
                        (["x.json", "--trace-format", "proto"], True), (["x.bin", "--trace-format", "json"],
                                                                 False)):
        out = tmp_path / args[0]
        proc = oc.run_cli(jaxprof_bin, ["export", str(path), "--perfetto", str(out), *args[1:]])
        assert proc.returncode == 0, proc.stderr.decode()
        raw = out.read_bytes()
        if out.name.endswith(".gz"):
            import gzip
            raw = gzip.decompress(raw)
        assert (raw[:1] == b"{") != proto
        assert ("protobuf" in proc.stdout.decode() + proc.stderr.decode()) == proto


def test_device_counters_are_counter_tracks(jaxprof_bin, tmp_path, trace_class):
    """A TPU `_counters_` line (zero-length samples of chip counters, their values as stats):
    a counter track per counter and stat, in both formats, each sample's value at its time, and
    the samples still on their line."""
    import sys
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "formats"))
    import tpu_new_lines as tnl

    fixture = oc.XPLANE_FIXTURES / "tpu_4chip_inference.xplane.pb"
    oc.require_profile(fixture)
    src = tnl.build(fixture, ["counters"], tmp_path / "tpu.xplane.pb")
    for out in ("t.json", "t.pftrace"):
        proc = oc.run_cli(jaxprof_bin, ["export", str(src), "--perfetto", str(tmp_path / out)])
        assert proc.returncode == 0, proc.stderr.decode()
    assert b"device counter tracks" in proc.stderr
    want, want_counters, _ = read_json(tmp_path / "t.json")
    got, got_counters, _, _ = read_proto(trace_class, tmp_path / "t.pftrace")
    assert dict(got_counters) == dict(want_counters)
    device = {k: v for k, v in want_counters.items() if not k[1].startswith("memory in use")}
    chips = {proc for proc, _ in device}
    names = {track for _, track in device}
    assert len(chips) == 4
    assert names == {f"{c} {s}" for c in tnl.COUNTERS for s in ("Raw Value", "Scaled Value")}
    for (proc, track), points in device.items():
        times = [t for t, _ in points]
        assert times == sorted(times) and len(points) > 1
        if track.endswith("Scaled Value"):  # doubles as written; the raw value is ten times it
            raw = dict(device[proc, track.replace("Scaled Value", "Raw Value")])
            assert all(raw[t] == int(v * 10) for t, v in points), track
    samples = {proc: len(v) for (proc, track), v in want.items() if track == "_counters_"}
    assert samples.keys() == chips
    for proc, n in samples.items():
        assert n == len(tnl.COUNTERS) * len(device[proc, f"{tnl.COUNTERS[0]} Raw Value"])


XPLANE_CASES = [c for c in CASES if not c[1].name.endswith(".zip")]


@pytest.mark.parametrize("name,path", XPLANE_CASES, ids=[c[0] for c in XPLANE_CASES])
def test_proto_trace_is_no_larger_than_its_profile(jaxprof_bin, tmp_path, trace_class, name,
                                                   path):
    """The packets are deflated in batches, each one `compressed_packets` packet of whole Trace
    records, so that the trace on disk is no larger than the profile it came from; a trace
    gzipped as a whole (*.pftrace.gz) holds its packets plain."""
    oc.require_profile(path)
    out = tmp_path / "t.pftrace"
    proc = oc.run_cli(jaxprof_bin, ["export", str(path), "--perfetto", str(out)])
    assert proc.returncode == 0, proc.stderr.decode()
    size = sum(f.stat().st_size for f in ([path] if path.is_file() else path.rglob("*.xplane.pb")))
    assert out.stat().st_size <= size, (out.stat().st_size, size)
    batches = trace_class.FromString(out.read_bytes()).packet
    assert batches and all(p.ListFields()[0][0].name == "compressed_packets" and
                           len(p.ListFields()) == 1 for p in batches)
    for p in batches:  # each batch inflates to whole records, as a Trace's packets
        raw, i = zlib.decompress(p.compressed_packets), 0
        while i < len(raw):
            assert raw[i] == 0x0A  # Trace.packet, length-delimited
            i, length, shift = i + 1, 0, 0
            while raw[i] & 0x80:
                length, i, shift = length | (raw[i] & 0x7F) << shift, i + 1, shift + 7
            i += 1 + (length | raw[i] << shift)
        assert i == len(raw)
    if name != "data-jax_cpu_8dev":
        return
    import gzip
    gz = tmp_path / "t.pftrace.gz"
    proc = oc.run_cli(jaxprof_bin, ["export", str(path), "--perfetto", str(gz)])
    assert proc.returncode == 0, proc.stderr.decode()
    plain = trace_class.FromString(gzip.decompress(gz.read_bytes())).packet
    assert not any(p.HasField("compressed_packets") for p in plain)
    assert len(plain) == len(packets(trace_class, out.read_bytes()))
