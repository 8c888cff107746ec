"""Partial summaries (docs/multihost.md): a set of partials gives exactly the JSON of the same
hosts' profiles, whatever the grouping and order in which the partials were written and merged,
and the same as the Python API's one profile of all hosts (read together, not host by host)."""
from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest

import ops_check as oc
from protowire import rewrite

# Host name -> profile: a run directory mixing GPU, TPU and CPU-backend hosts, a TPU host twice
# under two names, and the project's own 8-device CPU capture under two names.
HOSTS = {
    "alpha": oc.XPLANE_FIXTURES / "mi300x_jax_gemm.xplane.pb",
    "beta": oc.XPLANE_FIXTURES / "tpu_4chip_inference.xplane.pb",
    "delta": oc.XPLANE_FIXTURES / "tpu_4chip_inference.xplane.pb",
    "gamma": oc.XPLANE_FIXTURES / "tf_v100_8gpu_training.xplane.pb",
}
CPU = oc.DATA_DIR / "jax_cpu_8dev" / "plugins" / "profile" / "session" / "vm.xplane.pb"

COMMANDS = [
    ["summary"],
    ["summary", "--top", "50", "--observations", "10"],
    ["ops"],
    ["ops", "--group-by", "kernel"],
    ["ops", "--group-by", "name", "--prefix", "f"],
    ["ops", "--group-by", "module"],
    ["ops", "--group-by", "category"],
    ["ops", "--group-by", "opcode", "--device", "TPU"],
    ["ops", "--match", "fusion|convolution", "--top", "3"],
    ["timeline"],
    ["modules"],
    ["modules", "--top-ops", "0"],
    ["collectives", "--instances"],
    ["compile"],
    ["compile", "--passes-only", "--top-steps", "3"],
    ["kernels"],
    ["kernels", "--device", "GPU:1", "--top", "3"],
    ["kernels", "--match", "^[a-mA-M_]"],
    ["kernels", "--device", "TPU"],
]


def cli(binary, args, ok=True):
    proc = oc.run_cli(binary, args, timeout=300)
    if ok:
        assert proc.returncode == 0, (args, proc.stderr.decode(errors="replace")[-3000:])
    return proc


def cli_json(binary, args):
    out = json.loads(cli(binary, args + ["--format", "json"]).stdout)
    out.pop("input", None)  # the files read: profiles on one side, partials on the other
    return out


def without_path(summary):
    """A summary's JSON less its critical path: summary follows the path on a profile's events,
    which a partial does not keep (docs/summary.md), so one host's partial says so instead."""
    path = summary.pop("critical_path")
    return summary, path


def files(run):
    """The host files of a made-up run, named one by one: a directory of them is refused, as
    they are not the hosts of one capture (the same machine's file under several names)."""
    return [str(p) for p in sorted(run.glob("*.xplane.pb"))]


def make_run(root, hosts):
    run = root / "plugins" / "profile" / "run"
    run.mkdir(parents=True)
    for host, target in hosts.items():
        (run / f"{host}.xplane.pb").symlink_to(target)
    return run


@pytest.fixture()
def mixed_run(tmp_path):
    for target in list(HOSTS.values()) + [CPU]:
        if not target.is_file():
            pytest.skip(f"fixture {target} not found")
    return make_run(tmp_path / "mixed", HOSTS)


@pytest.fixture()
def cpu_run(tmp_path):
    if not CPU.is_file():
        pytest.skip(f"fixture {CPU} not found")
    # Two hosts of the CPU backend: their devices are the host threads' device ordinals.
    return make_run(tmp_path / "cpu", {"w0": CPU, "w1": CPU, "w2": CPU})


def write_partials(binary, run, out_dir):
    out_dir.mkdir()
    cli(binary, ["partial", *files(run), "-o", str(out_dir) + "/"])
    return sorted(out_dir.glob("*.partial"))


@pytest.mark.parametrize("which", ["mixed", "cpu"])
def test_partials_equal_profiles(jaxprof_bin, tmp_path, request, which):
    run = request.getfixturevalue(f"{which}_run")
    per_host = write_partials(jaxprof_bin, run, tmp_path / "per_host")
    assert len(per_host) == len(list(run.glob("*.xplane.pb")))
    one = tmp_path / "all.partial.gz"
    cli(jaxprof_bin, ["partial", *files(run), "-o", str(one)])
    # Merged in another grouping and order: the last host first, then the rest.
    first = tmp_path / "first.partial"
    cli(jaxprof_bin, ["partial", str(per_host[-1]), "-o", str(first)])
    rest = tmp_path / "rest.partial"
    cli(jaxprof_bin, ["partial"] + [str(p) for p in reversed(per_host[:-1])] + ["-o", str(rest)])
    for command in COMMANDS:
        want = cli_json(jaxprof_bin, command + files(run))
        assert cli_json(jaxprof_bin, command + [str(p) for p in per_host]) == want, command
        assert cli_json(jaxprof_bin, command + [str(one)]) == want, command
        assert cli_json(jaxprof_bin, command + [str(rest), str(first)]) == want, command
        # Host by host on one thread, or all at once: the same.
        assert cli_json(jaxprof_bin, command + files(run) + ["--threads", "1"]) == want, command


def test_diff_and_check_from_partials(jaxprof_bin, tmp_path):
    if not CPU.is_file():
        pytest.skip(f"fixture {CPU} not found")
    cpu_run = make_run(tmp_path / "one", {"w0": CPU})
    parts = tmp_path / "cpu.partial"
    cli(jaxprof_bin, ["partial", *files(cpu_run), "-o", str(parts)])
    want = cli_json(jaxprof_bin, ["diff", str(cpu_run), str(cpu_run)])
    assert cli_json(jaxprof_bin, ["diff", str(parts), str(cpu_run)]) == want
    # check exits 0, 3 or 4 by its verdict: the same verdict and JSON either way.
    metric = ["--metric", "module:jit_train_step", "--format", "json"]
    want = cli(jaxprof_bin, ["check", str(cpu_run), str(cpu_run)] + metric, ok=False)
    got = cli(jaxprof_bin, ["check", str(parts), str(parts)] + metric, ok=False)
    assert want.returncode in (0, 3, 4) and got.returncode == want.returncode
    got, want = json.loads(got.stdout), json.loads(want.stdout)
    assert len(got.pop("input")) == len(want.pop("input")) == 2  # what each side read
    assert got == want


def test_bad_partials(jaxprof_bin, tmp_path, cpu_run):
    junk = tmp_path / "junk.partial"
    junk.write_bytes(b"\x0a\x03abc")
    proc = cli(jaxprof_bin, ["summary", str(junk)], ok=False)
    assert proc.returncode == 2
    assert b"junk.partial" in proc.stderr and b"not a jaxprof partial" in proc.stderr
    good = tmp_path / "good.partial"
    cli(jaxprof_bin, ["partial", *files(cpu_run), "-o", str(good)])
    data = good.read_bytes()
    cut = tmp_path / "cut.partial"
    cut.write_bytes(data[: len(data) // 2])
    proc = cli(jaxprof_bin, ["summary", str(cut)], ok=False)
    assert proc.returncode == 2, proc.stderr
    assert b"cut.partial" in proc.stderr
    # The same host twice is refused, named.
    proc = cli(jaxprof_bin, ["summary", str(good), str(good)], ok=False)
    assert proc.returncode == 2 and b"given twice" in proc.stderr
    # Commands that read events refuse partials with a message.
    proc = cli(jaxprof_bin, ["roofline", str(good)], ok=False)
    assert proc.returncode == 2 and b"partial" in proc.stderr
    for command in ("ops", "kernels"):
        proc = cli(jaxprof_bin, [command, str(good), "--min-duration", "5"], ok=False)
        assert proc.returncode == 2 and b"--min-duration" in proc.stderr


def test_keep_going_skips_a_damaged_host(jaxprof_bin, tmp_path):
    if not CPU.is_file():
        pytest.skip("no CPU capture")
    run = make_run(tmp_path / "logs", {"w0": CPU, "w1": CPU})
    data = CPU.read_bytes()
    (run / "w2.xplane.pb").write_bytes(data[: len(data) // 3])
    proc = cli(jaxprof_bin, ["summary", *files(run), "--format", "json"], ok=False)
    assert proc.returncode == 2 and b"w2.xplane.pb" in proc.stderr
    proc = cli(jaxprof_bin, ["summary", *files(run), "--format", "json", "--keep-going"])
    assert b"skipped host w2" in proc.stderr and b"read 2 hosts, skipped 1" in proc.stderr
    got = json.loads(proc.stdout)
    got.pop("input")
    assert got["hosts"] == ["w0", "w1"]
    good = make_run(tmp_path / "good", {"w0": CPU, "w1": CPU})
    assert got == cli_json(jaxprof_bin, ["summary", *files(good)])


def test_file_matches_its_proto(jaxprof_bin, cpu_run, tmp_path, project_root):
    """The documented schema (partial.proto) decodes a written file, with the CLI's numbers."""
    if shutil.which("protoc") is None:
        pytest.skip("protoc not installed")
    pb = pytest.importorskip("google.protobuf")
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    proto = project_root / "src" / "jaxprof" / "formats" / "partial" / "partial.proto"
    desc = tmp_path / "partial.desc"
    subprocess.run(["protoc", f"--proto_path={proto.parent}", f"--descriptor_set_out={desc}",
                    proto.name], check=True)
    descriptors = descriptor_pb2.FileDescriptorSet.FromString(desc.read_bytes())
    pool = descriptor_pool.DescriptorPool()
    for f in descriptors.file:
        pool.Add(f)
    d = pool.FindMessageTypeByName("jaxprof.partial.PartialFile")
    cls = (message_factory.GetMessageClass(d) if hasattr(message_factory, "GetMessageClass")
           else message_factory.MessageFactory(pool).GetPrototype(d))
    path = tmp_path / "cpu.partial"
    cli(jaxprof_bin, ["partial", *files(cpu_run), "-o", str(path)])
    msg = cls.FromString(path.read_bytes())
    assert msg.magic == "jaxprof-partial" and msg.version == 2
    assert [h.host for h in msg.hosts] == ["w0", "w1", "w2"]
    timeline = cli_json(jaxprof_bin, ["timeline", *files(cpu_run)])
    ops = cli_json(jaxprof_bin, ["ops", *files(cpu_run)])
    devices = [(h, d) for h in msg.hosts for d in h.devices]
    assert [d.name for _, d in devices] == [t["device"] for t in timeline["devices"]]
    for (h, d), t, o in zip(devices, timeline["devices"], ops["devices"]):
        assert h.strings[0] == ""
        assert h.HasField("steady") and not h.steady.include_warmup
        assert d.timeline.set_apart_ps == int(t["set_apart_ns"] * 1000 + 0.5)
        assert d.op_set_apart == o["set_apart"]
        # Warm-up: the first run of each program compiled inside the capture (global_sse alone).
        assert sum(x.role == 1 for x in d.executions) == 1
        assert d.timeline.span_ps == int(t["span_ns"] * 1000 + 0.5)
        assert d.timeline.events == t["events"] == d.op_events + d.op_set_apart
        assert sum(g.duration.count for g in d.op_groups) == o["selected_events"]
        assert sum(g.duration.sum for g in d.op_groups) == sum(
            round(g["total_ns"] * 1000) for g in o["groups"])
        names = {h.strings[g.hlo_op] for g in d.op_groups}
        assert names == {g["name"] for g in o["groups"]}
        for x in d.executions:
            assert x.end_ps >= x.start_ps and x.first_op + x.ops <= len(d.execution_ops.name)
        assert len(d.collective_executions) > 0
    # Sizes stay small: a few tens of KB for a 527 KB profile of 24k events.
    assert len(path.read_bytes()) < 3 * 200_000


def test_one_profile_of_all_hosts_agrees(jaxprof_bin, mixed_run):
    """The Python API reads every host into one profile (not host by host): the same results."""
    jaxprof = pytest.importorskip("jaxprof")
    run = files(mixed_run)
    profile = jaxprof.load(run)

    def cli_data(args):
        out = cli_json(jaxprof_bin, args)
        if args[0] != "summary":  # a note of the CLI's; the API's Profile.set_apart() says it
            out.pop("set_apart", None)
        return out

    assert profile.summary(top=50, observations=10).data == cli_data(
        ["summary", *run, "--top", "50", "--observations", "10"])
    assert profile.ops().data == cli_data(["ops", *run])
    assert profile.ops("category").data == cli_data(["ops", *run, "--group-by", "category"])
    assert profile.timeline().data == cli_data(["timeline", *run])
    assert profile.modules().data == cli_data(["modules", *run])
    assert profile.collectives(instances=True).data == cli_data(
        ["collectives", *run, "--instances"])
    assert profile.compile().data == cli_data(["compile", *run])
    assert profile.kernels().data == cli_data(["kernels", *run])


# Synthetic profiles of the by-program and copy/fill tests, used here as fixtures.
from test_by_program import two_programs  # noqa: E402,F401
from test_memory_op import copies  # noqa: E402,F401

# What partials must carry beyond the mixed run's commands: per-program rows, device clocks
# (named in the JSON), copies and fills by their own stats and streams.
CARRIED = [
    ["ops"],
    ["ops", "--by-program"],
    ["ops", "--by-program", "--group-by", "category"],
    ["ops", "--group-by", "category"],
    ["ops", "--group-by", "opcode"],
    ["summary", "--top", "50"],
    ["timeline"],
    ["modules"],
    ["collectives", "--instances"],
]


def test_partials_carry_clocks_programs_and_copies(jaxprof_bin, tmp_path, two_programs, copies):
    tpu = oc.XPLANE_FIXTURES / "tpu_4chip_inference.xplane.pb"
    if not tpu.is_file():
        pytest.skip(f"fixture {tpu} not found")
    run = make_run(tmp_path / "logs", {"p": two_programs, "c": copies, "t0": tpu, "t1": tpu})
    per_host = write_partials(jaxprof_bin, run, tmp_path / "per_host")
    merged = tmp_path / "all.partial.gz"
    cli(jaxprof_bin, ["partial"] + [str(p) for p in reversed(per_host)] + ["-o", str(merged)])
    for command in CARRIED:
        want = cli_json(jaxprof_bin, command + files(run))
        assert cli_json(jaxprof_bin, command + [str(p) for p in per_host]) == want, command
        assert cli_json(jaxprof_bin, command + [str(merged)]) == want, command
    # The figures that make the comparison bite are there: TPU op times on the device clock,
    # one row per program, and the copies by their stats.
    ops = cli_json(jaxprof_bin, ["ops", str(merged)])
    tpus = [d for d in ops["devices"] if "TPU" in d["device"]]
    assert tpus and all(d["duration_clock"] == "device" for d in tpus)
    assert all(d["device_clock_events"] == d["events"] for d in tpus)
    split = cli_json(jaxprof_bin, ["ops", str(merged), "--by-program"])
    (gpu,) = [d for d in split["devices"] if d["host"] == "p"]
    assert sorted(g["program_ids"] for g in gpu["groups"]) == [[1], [2]]
    categories = cli_json(jaxprof_bin, ["ops", str(merged), "--group-by", "category"])
    (c,) = [d for d in categories["devices"] if d["host"] == "c"]
    memcpy = {g["name"]: g for g in c["groups"]}["memcpy"]
    assert memcpy["count"] == 4 and memcpy["total_ns"] == 17_000
    timeline = cli_json(jaxprof_bin, ["timeline", str(merged)])
    (t,) = [d for d in timeline["devices"] if d["host"] == "c"]
    assert t["memcpy_ns"] == 17_000


@pytest.mark.parametrize("hours", [3, 35])
def test_a_capture_of_hours(jaxprof_bin, tmp_path, hours):
    """Times hours from the host's zero are valid in a partial: a 3-hour capture (1.1e16 ps), and
    one of 35 hours (1.3e17 ps, past the 2^56 ps partial files once refused while profiles took
    it: every command reads hosts through partials, so such a capture failed to load at all)."""
    from xspace_builder import SpaceBuilder

    sb = SpaceBuilder()
    tpu = sb.plane("/device:TPU:0", plane_id=1)
    module = tpu.event_md("jit_step(1)")
    fus = tpu.event_md("%fusion.1 = f32[8] fusion(...)", display_name="fusion.1")
    ml = tpu.line(2, "XLA Modules", 1_000)
    xl = tpu.line(3, "XLA Ops", 1_000)
    hour = 3600 * 10**12
    for start in (0, hours * hour):
        tpu.event(ml, module, start, 200_000)
        tpu.event(xl, fus, start + 1_000, 10_000)
    run = tmp_path / "long" / "plugins" / "profile" / "run"
    run.mkdir(parents=True)
    sb.write(run / "h.xplane.pb")
    got = cli_json(jaxprof_bin, ["summary", str(run)])
    assert got["device"]["span_ns"] > hours * 3600 * 1e9
    parts = tmp_path / "h.partial"
    cli(jaxprof_bin, ["partial", str(run), "-o", str(parts)])
    got, _ = without_path(got)
    from_part, path = without_path(cli_json(jaxprof_bin, ["summary", str(parts)]))
    assert from_part == got and "partial" in path["unavailable"]



STEADY_FLAGS = [[], ["--include-autotuning"], ["--include-warmup"],
                ["--include-autotuning", "--include-warmup"]]
STEADY_COMMANDS = [["summary"], ["ops"], ["modules"], ["timeline"], ["collectives"]]


@pytest.mark.parametrize("profile", ["nsys", "cpu"])
def test_steady_state_from_partials(jaxprof_bin, tmp_path, profile):
    """A partial holds the steady state its flags chose: commands with the same flags give the
    profile's JSON (what was set apart included); other flags are refused, named."""
    path = (oc.SHARED_FIXTURES / "nsys-jax" / "pax_fsdp4_4proc_proc0.zip" if profile == "nsys"
            else CPU)
    if not path.is_file():
        pytest.skip(f"fixture {path} not found")
    for flags in STEADY_FLAGS:
        part = tmp_path / f"steady{len(flags)}{''.join(f[10] for f in flags)}.partial"
        cli(jaxprof_bin, ["partial", str(path), "-o", str(part), *flags])
        for command in STEADY_COMMANDS:
            want = cli_json(jaxprof_bin, command + [str(path), *flags])
            got = cli_json(jaxprof_bin, command + [str(part), *flags])
            if command == ["summary"]:
                (want, _), (got, _) = without_path(want), without_path(got)
            assert got == want, (command, flags)
        if flags == []:
            summary = cli_json(jaxprof_bin, ["summary", str(part)])
            assert summary["set_apart"]["warmup"]["executions"] > 0
            proc = cli(jaxprof_bin, ["ops", str(part), "--include-warmup"], ok=False)
            assert proc.returncode == 2
            assert b"--include-warmup" in proc.stderr and part.name.encode() in proc.stderr


def test_directory_of_unrelated_hosts_refused(jaxprof_bin, mixed_run, cpu_run, tmp_path):
    """Hosts found in one directory must be one capture's, whether read as profiles or partials
    (partial, hosts and every command reading host by host); named one by one they are read."""
    for run in (mixed_run, cpu_run):
        for command in (["summary"], ["hosts"], ["partial", "-o", str(tmp_path / "x.partial")]):
            proc = cli(jaxprof_bin, command + [str(run)], ok=False)
            assert proc.returncode == 2, (command, proc.stderr)
            assert b"not the hosts of one capture" in proc.stderr
    per_host = write_partials(jaxprof_bin, cpu_run, tmp_path / "parts")
    proc = cli(jaxprof_bin, ["summary", str(tmp_path / "parts")], ok=False)
    assert proc.returncode == 2 and b"not the hosts of one capture" in proc.stderr
    proc = cli(jaxprof_bin, ["summary", *map(str, per_host)])
    assert proc.stderr.count(b"may not be hosts of one capture") == 1
    # A partial written from them keeps the warning with its hosts; read back, it is said once.
    merged = tmp_path / "named.partial"
    proc = cli(jaxprof_bin, ["partial", *map(str, per_host), "-o", str(merged)])
    assert proc.stderr.count(b"may not be hosts of one capture") == 1
    for command in (["summary"], ["report", "-o", str(tmp_path / "named.html")]):
        proc = cli(jaxprof_bin, command + [str(merged)])
        assert proc.stderr.count(b"may not be hosts of one capture") == 1, (command, proc.stderr)


FLAME_COMMANDS = [
    ["flame", "--format", "json"],
    ["flame", "--by", "op-name", "--idle", "--format", "json"],
    ["flame", "--by", "module", "--device", "GPU", "--format", "json"],
    ["flame", "--by", "source", "--format", "csv", "--top", "0"],
    ["flame", "--by", "module", "--folded", "-"],
]


def report_sections(path):
    """The report's sections by id (the page's data block, which carries every table, apart)."""
    html = path.read_text()
    parts = re.split(r'<section id="([^"]+)"', html)
    return {parts[i]: parts[i + 1].split("</section>")[0] for i in range(1, len(parts), 2)}


@pytest.mark.parametrize("which", ["mixed", "cpu"])
def test_flame_and_report_from_partials(jaxprof_bin, tmp_path, request, which):
    run = request.getfixturevalue(f"{which}_run")
    per_host = write_partials(jaxprof_bin, run, tmp_path / "per_host")
    one = tmp_path / "all.partial"
    cli(jaxprof_bin, ["partial", *files(run), "-o", str(one)])
    for command in FLAME_COMMANDS:
        want = cli(jaxprof_bin, command + files(run)).stdout
        assert want
        for given in ([str(p) for p in reversed(per_host)], [str(one)]):
            got = cli(jaxprof_bin, command + given).stdout
            if "json" in command:
                got, want_json = json.loads(got), json.loads(want)
                got.pop("input"), want_json.pop("input")
                assert got == want_json, command
            else:
                assert got == want, command
    # Mixed: the first host's partial with the other hosts' profiles.
    mixed = [str(per_host[0])] + files(run)[1:]
    assert cli(jaxprof_bin, FLAME_COMMANDS[3] + mixed).stdout == cli(
        jaxprof_bin, FLAME_COMMANDS[3] + files(run)).stdout

    cli(jaxprof_bin, ["report", *files(run), "-o", str(tmp_path / "profiles.html")])
    cli(jaxprof_bin, ["report", str(one), "-o", str(tmp_path / "partials.html")])
    cli(jaxprof_bin, ["report", *mixed, "-o", str(tmp_path / "mixed.html")])
    want = report_sections(tmp_path / "profiles.html")
    for name in ("partials.html", "mixed.html"):
        got = report_sections(tmp_path / name)
        assert got.keys() == want.keys()
        for section in want:
            if section in ("roofline", "memory", "critical-path"):
                # Not in partials: said plainly, with no figures.
                assert "Not in partial files: give the profiles" in got[section]
                assert "<table" not in got[section] and "<svg" not in got[section]
            elif section == "summary":
                # The profile path shown differs; every figure is the same.
                strip = lambda s: re.sub(r"<dt>profile</dt><dd>[^<]*</dd>", "", s)
                assert strip(got[section]) == strip(want[section])
            else:
                assert got[section] == want[section], section


def test_older_partial_without_flame_is_named(jaxprof_bin, tmp_path, cpu_run):
    """A partial written before the flame stacks (its parts lack the bit) is named, with what to do."""
    good = tmp_path / "good.partial"
    cli(jaxprof_bin, ["partial", files(cpu_run)[0], "-o", str(good)])
    old = tmp_path / "old.partial"
    old.write_bytes(strip_flame(good.read_bytes()))
    assert cli_json(jaxprof_bin, ["summary", str(old)]) == cli_json(jaxprof_bin, ["summary", str(good)])
    for command in (["flame"], ["report", "-o", str(tmp_path / "r.html")]):
        proc = cli(jaxprof_bin, command + [str(old)], ok=False)
        assert proc.returncode == 2, proc.stderr
        assert b"old.partial" in proc.stderr and b"write it again with `jaxprof partial`" in proc.stderr



def strip_flame(data):
    """The file as a writer before the flame stacks would have made it: no Device.flame (16),
    and Host.parts (1) without the flame bit (512)."""
    def device(number, wire, value):
        return None if number == 16 else value

    def host(number, wire, value):
        if number == 1:
            return value & ~512
        if number == 10:
            return rewrite(value, device)
        return value

    return rewrite(data, lambda n, w, v: rewrite(v, host) if n == 3 else v)


def test_sums_over_hosts_that_would_overflow_are_refused(jaxprof_bin, tmp_path, cpu_run):
    """Each file keeps its totals within 2^61 ps, but five hosts' totals summed pass 2^63: the
    set is refused, naming the file of the host that passes it, never a wrapped number."""
    good = tmp_path / "good.partial"
    cli(jaxprof_bin, ["partial", files(cpu_run)[0], "-o", str(good)])
    data = good.read_bytes()

    def host_named(name, total):
        groups = []  # the first op group of the file alone gets the large total

        def moments(number, wire, value):
            return total if number == 2 else value

        def group(number, wire, value):
            return rewrite(value, moments) if number == 5 else value

        def device(number, wire, value):
            if number != 7:
                return value
            groups.append(value)
            return rewrite(value, group) if len(groups) == 1 else value

        def host(number, wire, value):
            if number == 2:
                return name.encode()
            if number == 3:
                return f"/captures/{name}.xplane.pb".encode()
            return rewrite(value, device) if number == 10 else value

        return rewrite(data, lambda n, w, v: rewrite(v, host) if n == 3 else v)

    paths = []
    for i in range(5):
        path = tmp_path / f"h{i}.partial"
        path.write_bytes(host_named(f"h{i}", 1 << 61))
        paths.append(str(path))
    # One such host alone is within the file's limits.
    cli(jaxprof_bin, ["summary", paths[0], "--format", "json"])
    for command in (["summary"], ["ops"], ["partial", "-o", str(tmp_path / "all.partial")]):
        proc = cli(jaxprof_bin, command + paths, ok=False)
        assert proc.returncode == 2, (command, proc.stderr)
        assert b"sum past 2^63" in proc.stderr and b".partial" in proc.stderr, proc.stderr
