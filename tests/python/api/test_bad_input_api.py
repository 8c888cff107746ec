"""Bad input through the Python API and the partial files: a ProfileError naming the file, never a
crash. The inputs are the smallest ones that once broke jaxprof (a Chrome trace without planes
made summary and compile read a plane that does not exist) and files cut off mid-write, which
say that they end early."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

import jaxprof

ROOT = Path(__file__).resolve().parents[3]
DATA = ROOT / "tests" / "data"
MATMUL = DATA / "jax_cpu_matmul/plugins/profile/session/vm.xplane.pb"
CUT_WORDS = ("ends early", "may have been cut off")


@pytest.mark.parametrize("text", ['[{"name":"x"}]', '{"traceEvents":[{"name":"a","ts":0}]}'])
@pytest.mark.parametrize("analysis", ["summary", "compile", "ops", "timeline", "info"])
def test_trace_without_planes_is_refused(tmp_path: Path, text: str, analysis: str) -> None:
    f = tmp_path / "tiny.trace.json"
    f.write_text(text)
    with pytest.raises(jaxprof.ProfileError) as info:
        getattr(jaxprof.load(f), analysis)()
    assert info.value.path == str(f)


def test_cut_xspace_says_it_ends_early(tmp_path: Path) -> None:
    whole = MATMUL.read_bytes()
    f = tmp_path / "cut.xplane.pb"
    f.write_bytes(whole[: len(whole) // 2])
    with pytest.raises(jaxprof.CorruptProfileError) as info:
        jaxprof.load(f).ops()
    assert info.value.path == str(f)
    for w in CUT_WORDS + (f"truncated after {len(whole) // 2} bytes",):
        assert w in info.value.reason, info.value.reason


def test_cut_partial_file_says_it_ends_early(jaxprof_bin, tmp_path: Path) -> None:
    whole = tmp_path / "host.partial"
    subprocess.run([str(jaxprof_bin), "partial", str(DATA / "jax_cpu_8dev"), "-o", str(whole)],
                   check=True, capture_output=True)
    data = whole.read_bytes()
    cut = tmp_path / "cut.partial"
    cut.write_bytes(data[: len(data) * 2 // 3])
    for command in ("summary", "ops", "hosts"):
        r = subprocess.run([str(jaxprof_bin), command, str(cut)], capture_output=True, text=True,
                           timeout=60)
        assert r.returncode == 2, r.stderr
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"jaxprof: {cut}"), r.stderr
        assert all(w in lines[0] for w in CUT_WORDS), lines[0]


def test_profile_of_a_path_says_to_load_it() -> None:
    """`jaxprof.Profile(path)` (a common slip for `jaxprof.load(path)`) says what to call instead
    of failing later with a C++ cast error."""
    for arg in (str(MATMUL), MATMUL, [MATMUL]):
        with pytest.raises(TypeError, match=r"jaxprof\.load\("):
            jaxprof.Profile(arg)
