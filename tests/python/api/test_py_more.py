"""The Python bindings of flame, collectives, compile and summary (each equal to the CLI's
JSON), and jaxprof view (CLI and Python): the written trace and the loopback server."""
from __future__ import annotations

import base64
import gzip
import json
import re
import shutil
import subprocess
import urllib.error
import urllib.request
from pathlib import Path

import pytest

import ops_check

jaxprof = pytest.importorskip("jaxprof",
                             reason="the jaxprof package is not installed (pip install .)")

ROOT = Path(__file__).resolve().parents[3]
DATA = ROOT / "tests" / "data"
PROFILES = [
    DATA / "jax_cpu_8dev",
    DATA / "jax_cpu_matmul.xplane.pb.gz",
]


def cli() -> str:
    path = shutil.which("jaxprof")
    if path is None:
        pytest.skip("the jaxprof command is not on PATH")
    return path


def cli_json(*args: str) -> dict:
    out = subprocess.run([cli(), *args, "--format", "json"], check=True, capture_output=True,
                         text=True).stdout
    return ops_check.api_view(args[0], json.loads(out))


def cli_out(*args: str) -> bytes:
    return subprocess.run([cli(), *args], check=True, capture_output=True).stdout


@pytest.mark.parametrize("path", PROFILES, ids=lambda p: p.name)
@pytest.mark.parametrize("by", ["source", "op-name", "module"])
def test_flame_equals_cli(path: Path, by: str, tmp_path: Path) -> None:
    f = jaxprof.load(path).flame(by)
    assert f.data == cli_json("flame", str(path), "--by", by)
    cli_out("flame", str(path), "--by", by, "--title", "t", "-o", str(tmp_path / "f.svg"),
            "--folded", str(tmp_path / "f.txt"), "--speedscope", str(tmp_path / "f.json"))
    assert f.svg(title="t") == (tmp_path / "f.svg").read_text()
    assert f.folded() == (tmp_path / "f.txt").read_text()
    assert json.loads(f.speedscope()) == json.loads((tmp_path / "f.json").read_text())
    # Rows: one per frame under the devices; the devices' self time adds up to the root.
    assert sum(r["self_ns"] for r in f.rows) == pytest.approx(f.data["tree"]["total_ns"])
    assert {r["device"] for r in f.rows} == {d["device"] for d in f.data["devices"]}


def test_flame_options_and_html() -> None:
    path = DATA / "jax_cpu_8dev"
    f = jaxprof.load(path).flame("op_name", device="CPU:1", idle=False)
    assert f.data == cli_json("flame", str(path), "--by", "op-name", "--device", "CPU:1",
                              "--no-idle")
    html = f._repr_html_()
    m = re.search(r'src="data:image/svg\+xml;base64,([^"]+)"', html)
    assert html.startswith("<iframe") and m
    assert base64.b64decode(m.group(1)).decode() == f.svg()
    with pytest.raises(jaxprof.InvalidOptionError):
        jaxprof.load(path).flame("nope")


@pytest.mark.parametrize("path", PROFILES, ids=lambda p: p.name)
def test_collectives_compile_summary_equal_cli(path: Path) -> None:
    p = jaxprof.load(path)
    c = p.collectives()
    assert c.data == cli_json("collectives", str(path))
    assert len(c.rows) == len(c.data["ops"])
    assert p.collectives(top=1, instances=True).data == cli_json(
        "collectives", str(path), "--top", "1", "--instances")
    comp = p.compile()
    assert comp.data == cli_json("compile", str(path))
    assert len(comp.rows) == len(comp.data["events"])
    assert p.compile(top_steps=2).data == cli_json("compile", str(path), "--top-steps", "2")
    s = p.summary()
    assert s.data == cli_json("summary", str(path))
    assert str(s) == cli_out("summary", str(path)).decode()
    assert p.summary(top=2, observations=1).data == cli_json("summary", str(path), "--top", "2",
                                                             "--observations", "1")
    assert [r["rule"] for r in s.rows] == [o["rule"] for o in s.data["observations"]]


def test_summary_html_and_pandas() -> None:
    s = jaxprof.load(DATA / "jax_cpu_8dev").summary()
    html = s._repr_html_()
    assert "Observations" in html and "all-reduce.5" in html and "<table>" in html
    pd = pytest.importorskip("pandas")
    assert list(s.to_pandas().columns[:2]) == ["rule", "text"]
    assert len(jaxprof.load(DATA / "jax_cpu_8dev").collectives().to_pandas()) == 2


def _op_events(trace: dict) -> int:
    # Op events: the complete events with an op category (derived tracks, module executions and
    # host compile events have none).
    return sum(1 for e in trace["traceEvents"]
               if e.get("ph") == "X" and "category" in e.get("args", {}))


def _copy_capture(tmp_path: Path) -> Path:
    dst = tmp_path / "logs"
    shutil.copytree(DATA / "jax_cpu_8dev", dst)
    return dst


def test_cli_view_writes_a_trace_with_the_ops_events(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    logs = _copy_capture(tmp_path)
    monkeypatch.chdir(tmp_path)  # the trace goes to the current directory, not the capture
    out = cli_out("view", str(logs)).decode()
    trace_path = tmp_path / "vm.perfetto.json.gz"
    assert "wrote vm.perfetto.json.gz" in out
    assert "ui.perfetto.dev" in out and "Open trace file" in out
    assert f"xprof server --logdir {logs.resolve()}" in out and "tensorboard --logdir" in out
    trace = json.loads(gzip.decompress(trace_path.read_bytes()))
    ops = cli_json("ops", str(logs), "--include-autotuning", "--include-warmup")
    want = sum(d["selected_events"] for d in ops["devices"])
    assert _op_events(trace) == want == 704


def _fetch(url: str, method: str = "GET") -> "tuple[int, dict, bytes]":
    req = urllib.request.Request(url, method=method)
    with urllib.request.urlopen(req, timeout=10) as r:
        return r.status, dict(r.headers), r.read()


def test_cli_view_serves_on_loopback_once(tmp_path: Path) -> None:
    logs = _copy_capture(tmp_path)
    proc = subprocess.Popen([cli(), "view", str(logs), "--serve", "--port", "0", "--serve-for",
                             "30"], stdout=subprocess.PIPE, text=True, cwd=tmp_path)
    try:
        url = None
        assert proc.stdout is not None
        for line in proc.stdout:
            m = re.search(r"on (http://127\.0\.0\.1:\d+/\S+)", line)
            if m:
                url = m.group(1)
                break
        assert url is not None
        status, headers, _ = _fetch(url, "OPTIONS")
        assert status == 204
        assert headers["Access-Control-Allow-Origin"] == "https://ui.perfetto.dev"
        status, headers, body = _fetch(url)
        assert status == 200 and json.loads(gzip.decompress(body))["traceEvents"]
        assert proc.wait(timeout=10) == 0  # stops after the download
    finally:
        proc.kill()
        proc.wait()


def test_cli_view_serving_stops_after_its_time(tmp_path: Path) -> None:
    logs = _copy_capture(tmp_path)
    r = subprocess.run([cli(), "view", str(logs), "--serve", "--port", "0", "--serve-for", "0.5"],
                       capture_output=True, text=True, timeout=20, cwd=tmp_path)
    assert r.returncode == 0 and "time is up" in r.stdout


def test_python_view(tmp_path: Path, capsys: pytest.CaptureFixture,
                     monkeypatch: pytest.MonkeyPatch) -> None:
    logs = _copy_capture(tmp_path)
    monkeypatch.chdir(tmp_path)
    v = jaxprof.view(logs)
    assert "Open trace file" in capsys.readouterr().out
    assert v.trace_path == tmp_path / "vm.perfetto.json.gz"
    trace = json.loads(gzip.decompress(v.trace_path.read_bytes()))
    assert _op_events(trace) == v.written["op_events"] == 704
    assert not v.serving


def test_python_view_serves_without_blocking(tmp_path: Path) -> None:
    logs = _copy_capture(tmp_path)
    v = jaxprof.view(logs, serve=True, port=0, serve_for=30, quiet=True,
                     output=tmp_path / "t.json")
    try:
        assert v.serving and v.port and v.url and v.url.endswith(f"127.0.0.1:{v.port}/t.json")
        host, _port = v._server.server_address[:2]
        assert host == "127.0.0.1"
        with pytest.raises(urllib.error.HTTPError):
            _fetch(f"http://127.0.0.1:{v.port}/other")
        status, headers, body = _fetch(f"http://127.0.0.1:{v.port}/t.json")
        assert status == 200 and headers["Access-Control-Allow-Origin"] == "https://ui.perfetto.dev"
        assert len(json.loads(body)["traceEvents"]) > 704
        assert v.wait(10) and not v.serving and v.downloads == 1
    finally:
        v.stop()
    # Bounded lifetime, and block=True waits for it.
    v2 = jaxprof.view(logs, serve=True, block=True, port=0, serve_for=0.3, quiet=True,
                      output=tmp_path / "t2.json")
    assert not v2.serving and v2.downloads == 0
