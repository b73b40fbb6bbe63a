"""What an agent with shell and file tools can reach of the server (docs/agent-reach.md).

In the bubblewrap sandbox it cannot read the server's /proc/<pid>/environ or cmdline, the
Jupyter runtime dir (jpserver-*.json holds the server token) or the hermes state dir; where
bwrap is missing or cannot create namespaces the agent runs without it, and a warning says so.
Each check is made both ways, so it would fail if the sandbox stopped hiding anything.
These tests need a usable bwrap (scripts/ensure_bubblewrap.sh installs it); where namespaces
cannot be created they are skipped with the reason, unless HERMES_JUPYTER_REQUIRE_SANDBOX=1.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from hermes_jupyter.agents.base import TurnRequest
from hermes_jupyter.agents.bubblewrap import SandboxUnavailable, unusable_reason, wrap
from hermes_jupyter.agents.hermes import HermesAgent
from hermes_jupyter.agents.hermes.process import RUNNER
from tests.agents.hermes_fixtures import write_hermes_home
from tests.agents.test_hermes_backend import stub  # noqa: F401 - shared fixture (hermes_python is in conftest.py)
from tests.fakes.openai_stub_server import STUB_MODEL, OpenAIStubServer
from tests.fakes.recording_sink import RecordingSink

PLANTED_ENV = "planted-env-secret-5521"
PLANTED_ARG = "planted-cmdline-token-8834"
PLANTED_RUNTIME = "planted-runtime-token-1209"
PLANTED_STATE = "planted-journal-text-4470"
PLANTED = (PLANTED_ENV, PLANTED_ARG, PLANTED_RUNTIME, PLANTED_STATE)
#: How a NUL byte (the separator in /proc/<pid>/environ and cmdline) looks in a JSON tool result.
NUL = "\\u0000"


@pytest.fixture(scope="module")
def bwrap() -> str:
    reason = unusable_reason("bwrap")
    if reason is not None:
        if os.environ.get("HERMES_JUPYTER_REQUIRE_SANDBOX"):
            pytest.fail(reason)
        pytest.skip(f"the agent sandbox cannot be tested here: {reason}")
    return "bwrap"


@dataclass
class ServerDisk:
    """What a Jupyter server keeps on disk, with a planted secret in each place."""

    runtime: Path
    state: Path
    workspace: Path
    home: Path

    @property
    def hidden(self) -> list[str]:
        return [str(self.runtime), str(self.state)]

    def reads(self, pid: int | str) -> str:
        """A shell command that prints what an agent could steal from server `pid` and from the disk."""
        return (f"cat /proc/{pid}/environ /proc/{pid}/cmdline; cat {self.runtime}/jpserver-{pid}.json; "
                f"cat {self.state}/sessions/s1.json; echo written > {self.workspace}/out.txt; echo END")


@pytest.fixture
def disk(tmp_path: Path) -> ServerDisk:
    home = tmp_path / "hermes_home"  # writable for the agent; the state dir inside it is hidden (the default layout)
    disk = ServerDisk(tmp_path / "runtime", home / "jupyter", tmp_path / "work", home)
    for path in (disk.runtime, disk.state / "sessions", disk.workspace, disk.home):
        path.mkdir(parents=True, exist_ok=True)
    (disk.state / "sessions" / "s1.json").write_text(json.dumps({"messages": [PLANTED_STATE]}))
    return disk


def _plant_runtime_file(disk: ServerDisk, pid: int) -> None:
    (disk.runtime / f"jpserver-{pid}.json").write_text(json.dumps({"pid": pid, "token": PLANTED_RUNTIME}))


# A stand-in server: holds a secret in its environment and its command line, and runs the
# command it is given as its own child (sandboxed by `wrap` when the mode says so).
SERVER = """
import asyncio, json, os, subprocess, sys
from hermes_jupyter.agents.bubblewrap import wrap
mode, bwrap, workspace, hidden, command = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4]), sys.argv[5]
print(os.getpid(), flush=True)
sys.stdin.readline()  # the test plants the runtime file, which is named after this pid
argv = asyncio.run(wrap(["sh", "-c", command.replace("SERVER_PID", str(os.getpid()))], mode=mode, bwrap=bwrap,
                        env={"HERMES_HOME": os.environ["HERMES_HOME"]}, cwd=workspace, hidden=hidden))
done = subprocess.run(argv, capture_output=True, text=True, env={"PATH": os.environ["PATH"]})
print(done.stdout + done.stderr, flush=True)
"""


def _child_of_a_server(disk: ServerDisk, mode: str, bwrap: str) -> str:
    """What a command run as the direct child of a stand-in server printed."""
    env = {**os.environ, "PLANTED_SECRET": PLANTED_ENV, "HERMES_HOME": str(disk.home),
           "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    argv = [sys.executable, "-c", SERVER, mode, bwrap, str(disk.workspace), json.dumps(disk.hidden),
            disk.reads("SERVER_PID"),
            f"--ServerApp.token={PLANTED_ARG}"]
    with subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env) as server:
        assert server.stdin is not None and server.stdout is not None
        _plant_runtime_file(disk, int(server.stdout.readline()))
        out, _ = server.communicate("go\n", timeout=60)
    assert server.returncode == 0 and "END" in out, out
    return out


def test_a_sandboxed_child_of_the_server_cannot_read_its_process_or_its_private_dirs(
    disk: ServerDisk, bwrap: str,
) -> None:
    bare = _child_of_a_server(disk, "off", bwrap)
    assert all(secret in bare for secret in PLANTED), bare  # what there is to steal without the sandbox
    (disk.workspace / "out.txt").unlink()

    sandboxed = _child_of_a_server(disk, "require", bwrap)
    assert not [secret for secret in PLANTED if secret in sandboxed], sandboxed
    assert sandboxed.count("No such file or directory") == 4, sandboxed  # environ, cmdline, runtime, state
    assert (disk.workspace / "out.txt").read_text() == "written\n"  # its working directory stays writable


def test_the_sandbox_keeps_the_rest_of_the_disk_read_only(disk: ServerDisk, bwrap: str, tmp_path: Path) -> None:
    outside = Path.home() / f".hermes-reach-probe-{os.getpid()}"
    argv = asyncio.run(wrap(["sh", "-c", f"touch {outside}; echo hi > /tmp/private; cat /tmp/private"],
                            mode="require", bwrap=bwrap, env={"HERMES_HOME": str(disk.home)}, cwd=str(disk.workspace)))
    done = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    assert "Read-only file system" in done.stderr and not outside.exists()
    assert done.stdout == "hi\n" and not (Path("/tmp") / "private").exists()  # /tmp is its own


# ---- the fallback -----------------------------------------------------------------------------


def _fake_bwrap(tmp_path: Path, message: str) -> str:
    fake = tmp_path / "bwrap"
    fake.write_text(f"#!/bin/sh\necho '{message}' >&2\nexit 1\n")
    fake.chmod(0o755)
    return str(fake)


@pytest.mark.parametrize("kind", ["missing", "no namespaces"])
def test_without_a_usable_bwrap_the_agent_runs_bare_and_a_warning_says_why(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, kind: str,
) -> None:
    message = "bwrap: No permissions to create new namespace"
    bwrap = str(tmp_path / "no-such-bwrap") if kind == "missing" else _fake_bwrap(tmp_path, message)
    command = ["python3", "runner.py"]
    with caplog.at_level(logging.WARNING, logger="hermes_jupyter.agents.bubblewrap"):
        argv = asyncio.run(wrap(command, mode="auto", bwrap=bwrap, env={}, cwd=str(tmp_path)))
    assert argv == command
    (record,) = caplog.records
    assert record.levelno == logging.WARNING and "WITHOUT a sandbox" in record.getMessage()
    assert ("not installed" if kind == "missing" else message) in record.getMessage()
    with pytest.raises(SandboxUnavailable, match="must run in a sandbox"):
        asyncio.run(wrap(command, mode="require", bwrap=bwrap, env={}, cwd=str(tmp_path)))


def test_sandbox_off_runs_the_bare_command_without_probing(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        argv = asyncio.run(wrap(["x"], mode="off", bwrap=str(tmp_path / "none"), env={}, cwd=None))
    assert argv == ["x"] and not caplog.records


# ---- the real hermes-agent and its terminal and file tools ------------------------------------


@pytest.fixture
def reach_agent(hermes_python: Path, stub: OpenAIStubServer,  # noqa: F811 - the imported fixtures
                disk: ServerDisk) -> Callable[..., HermesAgent]:
    write_hermes_home(disk.home, stub.base_url, STUB_MODEL)
    _plant_runtime_file(disk, os.getpid())  # this test process is the agent's server

    def make(**traits: object) -> HermesAgent:
        return HermesAgent(command=[str(hermes_python), str(RUNNER)], env={"HERMES_HOME": str(disk.home)},
                           toolsets=["terminal", "file"], cwd=str(disk.workspace), sandbox_hidden=disk.hidden,
                           **traits)

    return make


async def _tool_results(agent: HermesAgent, prompts: list[str]) -> list[str]:
    results = []
    try:
        for index, prompt in enumerate(prompts):
            sink = RecordingSink()
            result = await agent.run_turn(TurnRequest(session_id="s", run_id=f"run-{index}", message=prompt,
                                                      history=[]), sink)
            assert result.outcome == "completed", result
            results.append(result.final_text)  # the stub echoes the tool result it was sent
    finally:
        await agent.aclose()
    return results


def _prompts(disk: ServerDisk) -> list[str]:
    terminal = {"command": disk.reads(os.getpid())}
    files = [f"{disk.runtime}/jpserver-{os.getpid()}.json", f"{disk.state}/sessions/s1.json"]
    return [f"use the terminal tool with {json.dumps(terminal)}",
            *(f"use the read_file tool with {json.dumps({'path': path})}" for path in files)]


def test_hermes_tools_in_the_sandbox_cannot_read_the_server(reach_agent: Callable[..., HermesAgent], disk: ServerDisk,
                                                            bwrap: str) -> None:
    agent = reach_agent(sandbox="require")
    shell, runtime_file, state_file = asyncio.run(_tool_results(agent, _prompts(disk)))
    for text in (shell, runtime_file, state_file):
        assert PLANTED_RUNTIME not in text and PLANTED_STATE not in text, text
    pid = os.getpid()
    assert shell.count("No such file or directory") == 4, shell  # environ, cmdline, runtime file, state file
    for missing in (f"/proc/{pid}/environ", f"/proc/{pid}/cmdline", f"jpserver-{pid}.json", "s1.json"):
        assert missing in shell, shell
    assert NUL not in shell  # nothing of this process's environ or cmdline (NUL-separated)
    assert "not found" in runtime_file.lower() or "no such file" in runtime_file.lower(), runtime_file
    assert (disk.workspace / "out.txt").read_text() == "written\n"


def test_hermes_tools_without_bwrap_warn_and_can_read_the_server(
    reach_agent: Callable[..., HermesAgent], disk: ServerDisk, tmp_path: Path, caplog: pytest.LogCaptureFixture,
) -> None:
    agent = reach_agent(sandbox="auto", bwrap=str(tmp_path / "no-bwrap"))
    with caplog.at_level(logging.WARNING, logger="hermes_jupyter.agents.bubblewrap"):
        shell, runtime_file, state_file = asyncio.run(_tool_results(agent, _prompts(disk)))
    assert any("WITHOUT a sandbox" in r.getMessage() for r in caplog.records)
    assert PLANTED_RUNTIME in shell and PLANTED_STATE in shell and NUL in shell
    assert PLANTED_RUNTIME in runtime_file and PLANTED_STATE in state_file
