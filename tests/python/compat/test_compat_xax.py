"""jaxprof.compat.xax: XAX profiling code, with only its imports changed, on real JAX (CPU).

The task below is written as an XAX user writes one (the profiling document's examples):
a config with the profiling fields, ``ProfilerMixin``, ``profile_context`` around the step,
``@annotate`` on methods and ``trace_function`` on an existing function. What each capture
holds is read back with jaxprof.load.
"""
from __future__ import annotations

import gzip
import inspect
import json
import logging
import os
import re
import subprocess
import sys
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import numpy as np
import pytest

os.environ.setdefault("JAX_PLATFORMS", "cpu")
jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
jaxprof = pytest.importorskip("jaxprof",
                              reason="the jaxprof package is not installed (pip install .)")

# The only lines that differ from XAX code: the imports.
from jaxprof.compat.xax import (ProfilerConfig, ProfilerMixin, annotate,  # noqa: E402
                                open_latest_profile, trace_function)
from jaxprof.compat.xax import view_profile  # noqa: E402
from jaxprof.compat.xax.profiling import tensorboard_command, tensorboard_log_dir  # noqa: E402
from jaxprof.compat.xax.sessions import list_sessions  # noqa: E402

PACKAGE_ROOT = Path(jaxprof.__file__).resolve().parents[1]


# ---- an XAX-style task ---------------------------------------------------------------------------
@dataclass
class MyTaskConfig(ProfilerConfig):
    # Enable profiling
    enable_profiling: bool = True
    # Directory to save profiling results (optional)
    profiling_dir: Optional[str] = None
    # How often to run profiling (in steps)
    profile_every_n_steps: int = 3
    # Duration of each profiling session in milliseconds
    profile_duration_ms: int = 3000
    # Maximum number of profiling sessions to save
    max_profile_count: int = 2
    learning_rate: float = 0.1


@dataclass
class State:
    """As XAX's State: the step counter is a device array."""

    num_steps: jax.Array


def mse(params, x, y):
    h = jnp.tanh(x @ params["w1"])
    return jnp.mean((h @ params["w2"] - y) ** 2)


@jax.jit
def train_step(params, x, y, lr):
    loss, grads = jax.value_and_grad(mse)(params, x, y)
    return jax.tree_util.tree_map(lambda p, g: p - lr * g, params, grads), loss


evaluate = jax.jit(mse)


class MyTask(ProfilerMixin[MyTaskConfig]):
    def __init__(self, config: MyTaskConfig, exp_dir: Optional[Path] = None) -> None:
        super().__init__(config)
        if exp_dir is not None:
            self.exp_dir = exp_dir
        rng = np.random.default_rng(0)
        self.params = {"w1": jnp.asarray(rng.normal(size=(16, 32)).astype(np.float32) * 0.1),
                       "w2": jnp.asarray(rng.normal(size=(32, 4)).astype(np.float32) * 0.1)}
        self.data = rng.normal(size=(64, 20)).astype(np.float32)
        self.losses: list = []
        # Wrap an existing function
        self.get_batch = trace_function(self.get_batch, name="get_batch")

    def get_batch(self, step: int):
        return jnp.asarray(self.data[:, :16]), jnp.asarray(self.data[:, 16:])

    @annotate("compute_loss")
    def compute_loss(self, model, x, y):
        """The loss of ``model`` on a batch."""
        return evaluate(model, x, y)

    @annotate("update")
    def update(self, model, x, y):
        return train_step(model, x, y, self.config.learning_rate)

    def train(self, num_steps: int, fail_at: Optional[int] = None) -> None:
        for i in range(num_steps):
            state = State(num_steps=jnp.asarray(i, jnp.int32))
            with self.profile_context(state, name="train_step"):
                with annotate(f"batch_{i}"):
                    x, y = self.get_batch(i)
                self.params, _ = self.update(self.params, x, y)
                self.losses.append(self.compute_loss(self.params, x, y))
                if i == fail_at:
                    raise RuntimeError(f"failed at step {i}")


def module_runs(path: Path, name: str) -> int:
    """Executions of program ``name`` in a capture, the first (warm-up) run included."""
    rows = jaxprof.load(path, include_warmup=True).modules().data["modules"]
    return sum(m["executions"] for m in rows if m["name"] == name)


def names(profile) -> list:
    return list(profile.events().name)


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A task trained for 10 steps: captures at steps 0 and 3 (every 3, at most 2)."""
    exp_dir = tmp_path_factory.mktemp("exp")
    task = MyTask(MyTaskConfig(), exp_dir=exp_dir)
    task.train(10)
    return task, exp_dir / "profiles"


# ---- annotate and trace_function -----------------------------------------------------------------
def test_annotate_decorates_functions_and_methods_and_is_a_context_manager(tmp_path) -> None:
    @annotate("scale")
    def scale(x: jax.Array, factor: float = 2.0) -> jax.Array:
        """Multiplies."""
        return x * factor

    class Model:
        @annotate("forward")
        def forward(self, x, *, bias=0.0):
            return jnp.sin(x) + bias

        @annotate("make")
        @staticmethod
        def make():
            return Model()

        @annotate("create")
        @classmethod
        def create(cls):
            return cls.make()

    assert scale.__name__ == "scale" and scale.__doc__ == "Multiplies."
    assert str(inspect.signature(scale)) == str(inspect.signature(scale.__wrapped__))
    assert list(inspect.signature(Model.forward).parameters) == ["self", "x", "bias"]
    plain = trace_function(evaluate.__wrapped__)  # XAX names it after __name__
    x = jnp.ones((8, 8))

    with jax.profiler.trace(str(tmp_path)):
        model = Model.create()
        original = model.forward
        model.forward = trace_function(original, name="model_forward")
        assert model.forward.__name__ == "forward"
        with annotate("outer"):
            with annotate("inner"):
                jax.block_until_ready(model.forward(scale(x), bias=1.0))
        jax.block_until_ready(plain({"w1": jnp.ones((8, 8)), "w2": jnp.ones((8, 2))}, x,
                                    jnp.zeros((8, 2))))
    ev = jaxprof.load(tmp_path).events()
    seen = list(ev.name)
    for name in ("scale", "forward", "make", "create", "model_forward", "outer", "inner",
                 "mse"):
        assert name in seen, name
    # One call each: one range each.
    assert seen.count("scale") == 1 and seen.count("model_forward") == 1
    # Nesting: "inner" lies within "outer".
    idx = {n: i for i, n in enumerate(ev.name) if n in ("outer", "inner")}
    s, d = ev.start_ps, ev.duration_ps
    o, i = idx["outer"], idx["inner"]
    assert s[o] <= s[i] and s[i] + d[i] <= s[o] + d[o]


def test_annotated_function_keeps_working_under_jit() -> None:
    @annotate("inside_jit")
    def body(x):
        return x + 1

    assert int(jax.jit(body)(jnp.int32(1))) == 2


# ---- ProfilerConfig ------------------------------------------------------------------------------
def test_config_defaults_and_subclassing() -> None:
    c = ProfilerConfig()
    assert (c.enable_profiling, c.profiling_dir, c.profile_every_n_steps, c.profile_duration_ms,
            c.max_profile_count, c.profile_gpu_trace) == (False, None, 100, 3000, 5, False)
    mine = MyTaskConfig(learning_rate=0.5)
    assert mine.enable_profiling and mine.profile_every_n_steps == 3 and mine.learning_rate == 0.5
    assert isinstance(mine, ProfilerConfig)


# ---- ProfilerMixin.profile_context ---------------------------------------------------------------
def test_profile_context_captures_the_scheduled_steps(trained) -> None:
    task, profiles = trained
    assert len(task.losses) == 10 and float(task.losses[-1]) < float(task.losses[0])
    assert task.get_profiling_dir() == profiles
    caps = task.profile_captures
    assert [c.first_step for c in caps] == [0, 3]  # 6 and 9 are due, but max_profile_count=2
    assert all(c.ok for c in caps) and task.profile_count == 2
    sessions = sorted((profiles / "plugins" / "profile").iterdir())
    assert [s.name for s in sessions] == sorted(c.session for c in caps)
    assert sessions[0].name.endswith("_train_step_step_0")
    assert sessions[1].name.endswith("_train_step_step_3")
    for cap in caps:
        assert len(list(cap.path.glob("*.xplane.pb"))) == 1
        p = jaxprof.load(cap.path)
        seen = names(p)
        # The block is a step mark, with everything annotated inside it.
        for name in ("train_step", "get_batch", "update", "compute_loss"):
            assert seen.count(name) == 1, (cap.first_step, name)
        # Its own step's work and nothing else: its batch only, one run of each program.
        batches = sorted(n for n in set(seen) if re.fullmatch(r"batch_\d+", n))
        assert batches == [f"batch_{cap.first_step}"]
        assert module_runs(cap.path, "jit_train_step") == 1
        assert module_runs(cap.path, "jit_mse") == 1
    assert jaxprof.latest(profiles) == caps[-1].path


def test_should_run_profiler_follows_the_schedule(tmp_path) -> None:
    task = MyTask(MyTaskConfig(profile_every_n_steps=4, max_profile_count=1), exp_dir=tmp_path)
    due = [s for s in range(13) if task.should_run_profiler(State(jnp.asarray(s)))]
    assert due == [0, 4, 8, 12]  # nothing captured yet: every multiple is due
    result = task.profile_fn(lambda: jax.block_until_ready(jnp.ones(3) * 2), State(jnp.asarray(4)),
                             name="eval")
    assert np.allclose(result, 2.0)
    assert [c.first_step for c in task.profile_captures] == [4]
    assert task.profile_captures[0].path.name.endswith("_eval_step_4")
    assert not task.should_run_profiler(State(jnp.asarray(8)))  # max_profile_count reached


def test_disabled_profiling_is_a_no_op(tmp_path) -> None:
    task = MyTask(MyTaskConfig(enable_profiling=False), exp_dir=tmp_path)
    task.train(4)
    assert len(task.losses) == 4
    assert task.profile_count == 0 and task.step_profiler is None
    assert not (tmp_path / "profiles").exists()

    # Disabled, it is a no-op even where the state is traced (inside jit).
    @jax.jit
    def step(count):
        with task.profile_context(State(count), name="inside"):
            return count + 1

    assert int(step(jnp.int32(0))) == 1


def test_enabled_profile_context_inside_jit_says_where_to_call_it(tmp_path) -> None:
    task = MyTask(MyTaskConfig(), exp_dir=tmp_path)

    @jax.jit
    def step(count):
        with task.profile_context(State(count), name="inside"):
            return count + 1

    with pytest.raises(TypeError, match="jax.jit"):
        step(jnp.int32(0))


def test_profiling_dir_and_gpu_trace_options(tmp_path, caplog) -> None:
    target = tmp_path / "my_profiles"
    task = MyTask(MyTaskConfig(profiling_dir=str(target), max_profile_count=1,
                               profile_gpu_trace=True), exp_dir=tmp_path / "exp")
    task.train(2)
    assert task.get_profiling_dir() == target.resolve()
    assert [c.first_step for c in task.profile_captures] == [0] and task.profile_count == 1
    assert "batch_0" in names(jaxprof.load(target))
    assert not (tmp_path / "exp").exists()

    # No profiling_dir and no experiment directory: a temporary folder, said in the log.
    with caplog.at_level(logging.WARNING, logger="jaxprof"):
        loose = MyTask(MyTaskConfig(max_profile_count=1))
        loose.train(1)
    assert loose.profile_count == 1
    assert str(loose.get_profiling_dir()) in caplog.text


def test_a_failing_block_still_ends_its_capture(tmp_path) -> None:
    task = MyTask(MyTaskConfig(profile_every_n_steps=2, max_profile_count=3), exp_dir=tmp_path)
    with pytest.raises(RuntimeError, match="failed at step 2"):
        task.train(5, fail_at=2)
    task.train(5)  # starts again at step 0: captures 0 (again, the third one) and no more
    caps = task.profile_captures
    assert [c.first_step for c in caps] == [0, 2, 0] and all(c.ok for c in caps)
    failed = jaxprof.load(caps[1].path)
    assert "batch_2" in names(failed) and "batch_3" not in names(failed)


def test_max_profile_count_zero_never_captures(tmp_path) -> None:
    task = MyTask(MyTaskConfig(max_profile_count=0), exp_dir=tmp_path)
    task.train(4)
    assert task.profile_captures == []
    with pytest.raises(ValueError, match="profile_every_n_steps"):
        MyTask(MyTaskConfig(profile_every_n_steps=0), exp_dir=tmp_path).train(1)


# ---- open_latest_profile -------------------------------------------------------------------------
def test_open_latest_profile(trained, tmp_path) -> None:
    _task, profiles = trained
    out = tmp_path / "latest.perfetto.json.gz"
    viewer = open_latest_profile(str(profiles), ui="perfetto", serve=False, output=out)
    assert viewer.trace_path == out and out.is_file()
    trace = json.loads(gzip.decompress(out.read_bytes()))
    assert trace["traceEvents"]
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ValueError, match="no captures"):
        open_latest_profile(empty, ui="perfetto")
    with pytest.raises(ValueError, match="no such directory"):
        open_latest_profile(tmp_path / "missing")
    if tensorboard_command() is None:
        with pytest.raises(RuntimeError, match="pip install tensorboard"):
            open_latest_profile(profiles, ui="tensorboard")


# ---- view_profile --------------------------------------------------------------------------------
def view_profile_cli(*args: str, **kw) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(PACKAGE_ROOT)] + (
        [env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    return subprocess.run([sys.executable, "-m", "jaxprof.compat.xax.view_profile", *args],
                          capture_output=True, text=True, env=env, timeout=60, **kw)


def test_view_profile_help_and_list(trained) -> None:
    task, profiles = trained
    help_ = view_profile_cli("--help")
    assert help_.returncode == 0
    assert "examples:" in help_.stdout and "--list-only" in help_.stdout
    assert "--ui=perfetto" in help_.stdout and "exit status" in help_.stdout

    r = view_profile_cli(f"--profile-dir={profiles}", "--list-only")
    assert r.returncode == 0, r.stderr
    caps = task.profile_captures
    lines = r.stdout.splitlines()
    assert lines[0].startswith("2 capture(s) under")
    for cap in caps:
        assert f"plugins/profile/{cap.session}" in r.stdout
        host = next(cap.path.glob("*.xplane.pb"))
        row = next(line for line in lines if host.name in line and line.strip().startswith("host"))
        assert re.search(r"\d+(\.\d)? (B|KiB|MiB)", row)
        assert re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", row)
    newest = next(line for line in lines if "(newest)" in line)
    assert caps[-1].session in newest


def test_view_profile_finds_the_profiles_folder_here(trained, monkeypatch, capsys) -> None:
    task, profiles = trained
    monkeypatch.delenv("XAX_PROFILE_DIR", raising=False)
    monkeypatch.delenv("JAXPROF_PROFILE_DIR", raising=False)
    monkeypatch.chdir(profiles.parent)  # the experiment directory: ./profiles
    assert view_profile.run(["--list-only"]) == 0
    assert task.profile_captures[-1].session in capsys.readouterr().out
    monkeypatch.chdir(profiles)  # no ./profiles, no ./*/profiles
    assert view_profile.run(["--list-only"]) == 2
    assert "no --profile-dir given" in capsys.readouterr().err


def test_view_profile_extract(trained, tmp_path) -> None:
    task, profiles = trained
    first = task.profile_captures[0]
    dest = tmp_path / "copies"
    # A capture is named by the end of its directory's name (or all of it, or its path).
    r = view_profile_cli(f"--profile-dir={profiles}", "--extract", str(dest),
                         "--session=train_step_step_0")
    assert r.returncode == 0, r.stderr
    copied = dest / first.session
    src = next(first.path.glob("*.xplane.pb"))
    assert (copied / src.name).read_bytes() == src.read_bytes()
    assert "batch_0" in names(jaxprof.load(copied))

    again = view_profile_cli(f"--profile-dir={profiles}", "--extract", str(dest),
                             f"--session={first.session}")
    assert again.returncode == 2 and "already exists" in again.stderr

    everything = tmp_path / "all"
    assert view_profile.run([f"--profile-dir={profiles}", "--extract", str(everything),
                             "--all"]) == 0
    assert sorted(p.name for p in everything.iterdir()) == sorted(
        c.session for c in task.profile_captures)


def test_view_profile_extract_without_dest(trained, tmp_path, monkeypatch) -> None:
    """``--extract`` alone copies the newest capture to ./extracted_profiles, as XAX's did."""
    task, profiles = trained
    monkeypatch.chdir(tmp_path)
    assert view_profile.run([f"--profile-dir={profiles}", "--extract"]) == 0
    newest = task.profile_captures[-1]
    (copied,) = (tmp_path / "extracted_profiles").iterdir()
    assert copied.name == newest.session
    src = next(newest.path.glob("*.xplane.pb"))
    assert (copied / src.name).read_bytes() == src.read_bytes()
    assert "batch_3" in names(jaxprof.load(copied))


def test_view_profile_bad_input(trained, tmp_path, capsys) -> None:
    _task, profiles = trained
    empty = tmp_path / "empty"
    empty.mkdir()
    cases = [
        ([f"--profile-dir={tmp_path / 'missing'}", "--list-only"], "no such directory"),
        ([f"--profile-dir={empty}", "--list-only"], "no captures found"),
        ([f"--profile-dir={profiles}", "--session=nope", "--ui=perfetto"], "no session 'nope'"),
        ([f"--profile-dir={profiles}", "--all"], "--all goes with --extract"),
        ([f"--profile-dir={profiles}", "--perfetto-port=70000"], "expected 0 to 65535"),
        ([f"--profile-dir={profiles}", "--ui=chrome"], "invalid choice"),
    ]
    for argv, message in cases:
        assert exit_code(argv) == 2, argv
        err = capsys.readouterr().err
        assert message in err, (argv, err)


def exit_code(argv: list) -> int:
    """view_profile's exit status: run() returns it, argparse exits with it."""
    try:
        return view_profile.run(argv)
    except SystemExit as e:
        return int(e.code)


def test_xax_layout_captures_are_found(tmp_path, capsys) -> None:
    """Captures written the way XAX wrote them: one log directory per capture."""
    profiles = tmp_path / "profiles"
    f = jax.jit(lambda a: jnp.tanh(a @ a))
    a = jnp.ones((32, 32))
    f(a).block_until_ready()
    for step in (0, 100):
        with jax.profiler.trace(str(profiles / f"train_step_step_{step}")):
            with annotate(f"xax_step_{step}"):
                jax.block_until_ready(f(a))
    assert view_profile.run([f"--profile-dir={profiles}", "--list-only"]) == 0
    out = capsys.readouterr().out
    assert "train_step_step_0/plugins/profile/" in out
    assert re.search(r"train_step_step_100/plugins/profile/\S+ +\(newest\)", out)

    dest = tmp_path / "copies"
    assert view_profile.run([f"--profile-dir={profiles}", "--extract", str(dest),
                             "--session=train_step_step_0"]) == 0
    (copied,) = dest.iterdir()
    seen = names(jaxprof.load(copied))
    assert "xax_step_0" in seen and "xax_step_100" not in seen
    all_dest = tmp_path / "all"
    assert view_profile.run([f"--profile-dir={profiles}", "--extract", str(all_dest),
                             "--all"]) == 0
    assert len(list(all_dest.iterdir())) == 2

    sessions = list_sessions(profiles)
    assert tensorboard_log_dir(profiles, sessions[-1]) == profiles
    assert tensorboard_log_dir(sessions[-1].path, sessions[-1]) == \
        profiles / "train_step_step_100"
    viewer = open_latest_profile(profiles, ui="perfetto", serve=False,
                                 output=tmp_path / "latest.perfetto.json.gz")
    assert viewer.trace_path.is_file()


@pytest.mark.skipif(tensorboard_command() is not None, reason="TensorBoard is installed here")
def test_view_profile_tensorboard_missing(trained) -> None:
    _task, profiles = trained
    r = view_profile_cli(f"--profile-dir={profiles}", "--ui=tensorboard")
    assert r.returncode == 2
    assert "TensorBoard is not installed" in r.stderr
    assert "pip install tensorboard" in r.stderr and "--ui=perfetto" in r.stderr


@pytest.mark.skipif(tensorboard_command() is not None, reason="TensorBoard is installed here")
def test_view_profile_default_without_tensorboard_opens_perfetto(trained, tmp_path,
                                                                 capsys) -> None:
    _task, profiles = trained
    out = tmp_path / "t.perfetto.json.gz"
    assert view_profile.run([f"--profile-dir={profiles}", "--perfetto-port=0",
                             "--serve-for=0.2", f"--output={out}"]) == 0
    text = capsys.readouterr().out
    assert "TensorBoard is not installed" in text and "Perfetto UI only" in text
    assert "stopped serving" in text and out.is_file()


def test_view_profile_serves_perfetto(trained, tmp_path) -> None:
    _task, profiles = trained
    out = tmp_path / "trace.perfetto.json.gz"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(PACKAGE_ROOT)] + (
        [env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    proc = subprocess.Popen(
        [sys.executable, "-m", "jaxprof.compat.xax.view_profile", f"--profile-dir={profiles}",
         "--ui=perfetto", "--perfetto-port=0", "--serve-for=30", f"--output={out}"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        url = None
        for line in proc.stdout:
            m = re.search(r"serving .* on (http://127\.0\.0\.1:\d+/\S+)", line)
            if m:
                url = m.group(1)
                break
        assert url, proc.stderr.read()
        body = urllib.request.urlopen(url, timeout=10).read()
        assert body == out.read_bytes()
        assert json.loads(gzip.decompress(body))["traceEvents"]
        rest, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    assert "served" in rest


# ---- TensorBoard, with a stand-in executable ----------------------------------------------------
@pytest.fixture
def fake_tensorboard(tmp_path, monkeypatch) -> Path:
    """A ``tensorboard`` first on PATH that writes its arguments, one per line, to the file
    this fixture returns, and exits (TensorBoard itself is not needed to check the call)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    argv = tmp_path / "tensorboard.argv"
    script = bin_dir / "tensorboard"
    script.write_text(f"#!/bin/sh\nprintf '%s\\n' \"$@\" > '{argv}'\n")
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    assert tensorboard_command() == [str(script)]
    return argv


def test_open_latest_profile_runs_tensorboard_when_installed(trained, fake_tensorboard) -> None:
    _task, profiles = trained
    assert open_latest_profile(str(profiles)) is None  # ui="auto": TensorBoard, until it exits
    assert fake_tensorboard.read_text().splitlines() == ["--logdir", str(profiles)]
    fake_tensorboard.unlink()
    assert open_latest_profile(profiles, ui="tensorboard") is None
    assert fake_tensorboard.read_text().splitlines() == ["--logdir", str(profiles)]


def test_view_profile_ui_tensorboard(trained, fake_tensorboard, capsys) -> None:
    _task, profiles = trained
    assert view_profile.run([f"--profile-dir={profiles}", "--ui=tensorboard", "--port=6123",
                             "--bind-all"]) == 0
    assert fake_tensorboard.read_text().splitlines() == [
        "--logdir", str(profiles), "--port", "6123", "--bind_all"]
    assert "http://localhost:6123" in capsys.readouterr().out
