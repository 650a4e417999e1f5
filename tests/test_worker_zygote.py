"""The xdist workers' zygote (tests/support/worker_zygote.py; docs/design/test-suite.md, "The workers'
zygote"): what execnet starts becomes ``python -u -c <bootstrap>`` on its own pipes, environment and
directory, with what the zygote imported, and exits with the worker's status; a worker whose client was
killed is killed too; without a zygote the client runs the interpreter itself."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import parent_pid
from tests.support.inner_pytest import workers_from_the_zygote
from tests.support.worker_zygote import SPEC_VARIABLE, WorkerZygote, _added_path

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="the zygote listens in Linux's abstract socket namespace"
)

# execnet's own bootstrap line: the first line of the input is the program.
_BOOTSTRAP = "import sys;exec(eval(sys.stdin.readline()))"

# What the program below reports, one line each, then the rest of its input and the exit status 3.
_REPORT = (
    "import os, sys; "
    "print(repr(sys.argv)); print(repr(sys.path[0])); print(os.getcwd()); "
    "print(os.environ.get('ZYGOTE_PROBE')); print('colorsys' in sys.modules); "
    "print(sys.stdout.write_through); print(sys.stdin.read().strip()); sys.exit(3)"
)


@pytest.fixture(scope="module")
def zygote() -> Iterator[WorkerZygote]:
    started = WorkerZygote.start(preload=("colorsys",))  # a module no worker imports: its presence shows
    try:
        yield started
    finally:
        started.close()


def _run(
    client: list[str], tmp_path: Path, program: str, rest: str = "", **env: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*client, "-u", "-c", _BOOTSTRAP],
        input=repr(program) + "\n" + rest,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "ZYGOTE_PROBE": "from-the-client", **env},
        timeout=30,
        check=False,
    )


# How a program ends, which a zygote's worker must end the same way as the interpreter (execnet and
# pytest-xdist read the status and the output).
_ENDINGS = {
    "keyboard-interrupt": "raise KeyboardInterrupt",  # dies of SIGINT
    "exit-message": "import sys; sys.exit('the message')",  # to stderr, status 1
    "exit-status": "import sys; sys.exit(7)",
    "exit-none": "import sys; sys.exit()",
    "exit-negative": "import sys; sys.exit(-1)",  # 255, not a signal
    "exit-over-a-byte": "import sys; sys.exit(300)",  # 44
    "error": "1 / 0",
    "thread-joined": (
        "import threading, time; "
        "threading.Thread(target=lambda: (time.sleep(0.2), print('joined', flush=True))).start()"
    ),
    "atexit": "import atexit; atexit.register(print, 'at exit')",
    "sigint-handler": "import signal; print(signal.getsignal(signal.SIGINT) is signal.default_int_handler)",
}


@pytest.mark.parametrize("program", list(_ENDINGS.values()), ids=list(_ENDINGS))
def test_a_worker_ends_as_the_interpreter_does(zygote: WorkerZygote, tmp_path: Path, program: str) -> None:
    fresh = _run([sys.executable], tmp_path, program)
    forked = _run(zygote.client, tmp_path, program)
    assert forked.returncode == fresh.returncode
    assert forked.stdout == fresh.stdout
    assert forked.stderr.splitlines()[-1:] == fresh.stderr.splitlines()[-1:]


def test_a_worker_runs_the_bootstrap_on_its_clients_streams_and_exits_with_its_status(
    zygote: WorkerZygote, tmp_path: Path
) -> None:
    result = _run(zygote.client, tmp_path, _REPORT, rest="more input\n")
    assert result.returncode == 3, result.stderr
    argv, path0, cwd, probe, preloaded, unbuffered, rest = result.stdout.splitlines()
    assert (argv, path0) == ("['-c']", "''")  # as `python -c` has them
    assert cwd == str(tmp_path)
    assert probe == "from-the-client"  # the client's environment, not the zygote's
    assert preloaded == "True"  # what the zygote imported, not imported again
    assert unbuffered == "True"  # -u, as execnet starts workers
    assert rest == "more input"  # what followed the first line is the worker's to read


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
def test_a_worker_killed_by_a_signal_is_a_client_killed_by_it(
    zygote: WorkerZygote, tmp_path: Path, signum: int
) -> None:
    """As execnet would see a crashed interpreter (pytest-xdist reports the worker crashed); SIGKILL (the
    OOM killer's) takes no handler, the client dies of it all the same."""
    result = _run(zygote.client, tmp_path, f"import os; os.kill(os.getpid(), {int(signum)})")
    assert result.returncode == -signum


def test_a_worker_whose_client_is_killed_is_killed_too(zygote: WorkerZygote, tmp_path: Path) -> None:
    client = subprocess.Popen(
        [*zygote.client, "-u", "-c", _BOOTSTRAP],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
    )
    assert client.stdin is not None and client.stdout is not None
    client.stdin.write(repr("import os, time; print(os.getpid(), flush=True); time.sleep(60)") + "\n")
    client.stdin.flush()
    worker = int(client.stdout.readline())
    assert worker != client.pid and parent_pid(worker) != client.pid  # a child of the zygote
    client.send_signal(signal.SIGKILL)
    client.wait(10)
    deadline = time.monotonic() + 10
    while Path(f"/proc/{worker}").exists():
        assert time.monotonic() < deadline, "the worker outlived its client"
        time.sleep(0.02)


def test_without_a_zygote_the_client_runs_the_interpreter_itself(tmp_path: Path) -> None:
    client = [sys.executable, "-S", str(Path(__file__).parent / "support" / "worker_zygote.py")]
    result = _run([*client, "connect", "@llmts-zygote-nobody-listens"], tmp_path, _REPORT)
    assert result.returncode == 3, result.stderr
    assert result.stdout.splitlines()[4] == "False"  # a fresh interpreter
    handler = _run([*client, "connect", "@llmts-zygote-nobody-listens"], tmp_path, _ENDINGS["sigint-handler"])
    assert handler.stdout == "True\n"  # Ctrl-C interrupts it, as any interpreter


def test_other_interpreter_settings_get_an_interpreter_of_their_own(
    zygote: WorkerZygote, tmp_path: Path
) -> None:
    """``PYTHON*`` variables are read as an interpreter starts: the zygote's were its own."""
    result = _run(zygote.client, tmp_path, _REPORT, PYTHONHASHSEED="123")
    assert result.returncode == 3, result.stderr
    assert result.stdout.splitlines()[4] == "False"  # not forked from the zygote


def test_folders_put_before_the_zygotes_pythonpath_come_first_unless_they_hide_what_it_imported(
    zygote: WorkerZygote, tmp_path: Path
) -> None:
    """pytester's subprocess runs put their own folder first on ``PYTHONPATH``: a worker of theirs forks
    from the zygote with that folder where a fresh interpreter has it, after ``''``. A folder holding a
    module the zygote imported (here ``colorsys``) would hide it in a fresh interpreter: such a client
    gets one."""
    theirs = os.environ.get("PYTHONPATH", "")
    first, shadowing = tmp_path / "first", tmp_path / "shadowing"
    for folder in (first, shadowing):
        folder.mkdir()
    (first / "zygote_helper.py").write_text("NAME = 'from the first folder'\n")
    (shadowing / "colorsys.py").write_text("")
    (first / "colorsys.ini").write_text("")  # not a module: hides nothing
    program = (
        "import sys, colorsys, zygote_helper; print(sys.path[1]); print(zygote_helper.NAME); "
        "print(colorsys.__file__)"
    )
    fresh = [sys.executable, "-S", str(Path(__file__).parent / "support" / "worker_zygote.py")]

    for client, forked in (
        (zygote.client, "True"),
        ([*fresh, "connect", "@llmts-zygote-nobody-listens"], "False"),
    ):
        path = os.pathsep.join(filter(None, [str(first), theirs]))
        result = _run(client, tmp_path, _REPORT, PYTHONPATH=path)
        assert result.stdout.splitlines()[4] == forked  # from the zygote, or a fresh interpreter to compare
        result = _run(client, tmp_path, program, PYTHONPATH=path)
        assert result.stdout.splitlines()[:2] == [str(first), "from the first folder"], result.stderr

    hiding = os.pathsep.join(filter(None, [str(shadowing), str(first), theirs]))
    result = _run(zygote.client, tmp_path, _REPORT, PYTHONPATH=hiding)
    assert result.stdout.splitlines()[4] == "False"  # an interpreter of its own
    result = _run(zygote.client, tmp_path, program, PYTHONPATH=hiding)
    assert result.stdout.splitlines()[2] == str(shadowing / "colorsys.py"), result.stderr


def test_only_folders_put_before_the_zygotes_own_pythonpath_are_followed(tmp_path: Path) -> None:
    ours = {"PYTHONPATH": "/zygote/a", "PYTHONUTF8": "1"}
    first = str(tmp_path)
    assert _added_path({**ours, "PYTHONPATH": f"{first}:/zygote/a"}, ours) == [first]
    assert _added_path({**ours, "PYTHONPATH": f"{first}::/zygote/a"}, ours) is None  # '' is the cwd
    assert _added_path(dict(ours), ours) == []
    assert _added_path({**ours, "PYTHONPATH": f"/zygote/a:{first}"}, ours) is None  # after the zygote's
    assert _added_path({**ours, "PYTHONPATH": f"{first}/zygote/a"}, ours) is None  # not a folder of its own
    assert _added_path({**ours, "PYTHONPATH": first}, ours) is None  # without the zygote's
    assert _added_path({**ours, "PYTHONPATH": f"{first}:/zygote/a", "PYTHONUTF8": "0"}, ours) is None
    assert _added_path({"PYTHONPATH": first}, {}) == [first]


def test_an_import_that_fails_or_warns_is_reported_and_changes_nothing_for_the_workers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "zygote_broken.py").write_text("raise RuntimeError('no native library')\n")
    (tmp_path / "zygote_warns.py").write_text(
        "import warnings\n"
        "warnings.filterwarnings('ignore', message='zygote-probe-filter')\n"
        "warnings.warn('zygote-import-warning')\n"
    )
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))  # the zygote's and its clients' alike
    (tmp_path / "zygote_quiet.py").write_text(
        "import warnings\nwarnings.warn(DeprecationWarning('zygote-known'))\n"
    )
    filters = ["ignore:zygote-known:DeprecationWarning"]  # as setup.cfg's filterwarnings has them
    zygote = WorkerZygote.start(
        preload=("zygote_broken", "zygote_warns", "zygote_quiet", "colorsys"), config_filters=filters
    )
    assert zygote is not None
    try:
        program = (
            "import sys, warnings; print('colorsys' in sys.modules); "
            "print(any('zygote-probe-filter' in str(f[1]) for f in warnings.filters))"
        )
        result = _run(zygote.client, tmp_path, program)
    finally:
        zygote.close()
    assert result.stdout.splitlines() == ["True", "False"], result.stderr  # forked; the filter undone
    logged = capfd.readouterr().err
    assert "importing zygote_broken failed" in logged and "RuntimeError: no native library" in logged
    assert "UserWarning: zygote-import-warning" in logged
    assert "zygote-known" not in logged  # the run's filters apply


def test_this_runs_workers_come_from_the_zygote(worker_id: str) -> None:
    if worker_id == "master" or os.environ.get("LLMTS_TEST_WORKER_ZYGOTE") == "0":
        pytest.skip("not an xdist worker of a run with the zygote")
    zygote_cmdline = Path(f"/proc/{os.getppid()}/cmdline").read_bytes()
    assert b"worker_zygote.py\0serve\0" in zygote_cmdline


def test_a_run_without_xdist_runs(request: pytest.FixtureRequest) -> None:
    """This suite's conftest implements a pytest-xdist hook (the worker count) next to the zygote's
    start; ``-p no:xdist`` leaves pytest without that hook, and the run must still start (pytest checks
    its plugins' hooks before it collects)."""
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:xdist", "--collect-only", "-q", "tests/test_errors.py"],
        cwd=request.config.rootpath,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "tests/test_errors.py::" in result.stdout  # its tests collected


def test_inner_runs_take_their_n_workers_from_the_zygote(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SPEC_VARIABLE, "popen//python=zygote-client")
    spec = "2*popen//python=zygote-client"
    assert workers_from_the_zygote(["-n", "2", "-q"]) == ["--tx", spec, "-q", "--dist", "load"]
    assert workers_from_the_zygote(["-n", "2", "--dist=loadscope"]) == ["--tx", spec, "--dist=loadscope"]
    assert workers_from_the_zygote(["-n", "0"]) == ["-n", "0"]  # no worker to start
    assert workers_from_the_zygote(["-n", "auto"]) == ["-n", "auto"]
    monkeypatch.delenv(SPEC_VARIABLE)
    assert workers_from_the_zygote(["-n", "2"]) == ["-n", "2"]  # a run without a zygote
