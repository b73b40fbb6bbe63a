"""A full disk, for real: the state dir on a 2 MiB tmpfs that the test fills to the last byte.

Writes answer 507 with a plain message; a run cut off by the full disk ends its
stream with a final message; once space returns its turn is settled with a
note saying the disk was full; no file is left torn or corrupt.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from pathlib import Path
from typing import Any, Iterator

import pytest

from hermes_jupyter import fsio
from hermes_jupyter.runs.diskfull import DISK_FULL_NOTE

from .client import HermesClient


@pytest.fixture
def small_disk(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A real 2 MiB tmpfs (CI runs as root); skipped with the reason where mounting is impossible."""
    mount = tmp_path_factory.mktemp("disk")
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs to fill needs root (CI runs as root)")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode(errors='replace').strip()}")
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=False)


@pytest.fixture
def hermes_state(small_disk: Path) -> Path:
    return small_disk / "state"


def fill(disk: Path) -> Path:
    """Fill the disk to the last byte; returns the filler to delete when space should return."""
    filler = disk / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        while True:
            os.write(fd, b"\0" * 65536)
    except OSError as exc:
        assert fsio.is_disk_full(exc)
    try:
        while True:
            os.write(fd, b"\0")
    except OSError:
        pass
    finally:
        os.close(fd)
    return filler


async def _all_messages(api: HermesClient, run_id: str) -> list[dict[str, Any]]:
    ws = await api.ws_fetch("hermes", "api", "runs", run_id, "stream", params={"after_seq": "0"})
    messages = []
    try:
        while (message := await asyncio.wait_for(ws.read_message(), 30)) is not None:
            messages.append(json.loads(message))
    finally:
        ws.close()
    return messages


async def _settled(api: HermesClient, sid: str, timeout_s: float = 20) -> dict[str, Any]:
    deadline = asyncio.get_running_loop().time() + timeout_s
    while True:
        code, session = await api.call("GET", "sessions", sid)
        assert code == 200, session
        if session["pending_user_message"] is None or asyncio.get_running_loop().time() > deadline:
            return session  # type: ignore[no-any-return]
        await asyncio.sleep(0.2)


async def test_a_full_disk_is_a_507_and_a_cut_run_is_settled_with_a_note_once_space_returns(
    api: HermesClient, small_disk: Path, hermes_state: Path
) -> None:
    sid = (await api.create_session(title="before"))["session_id"]
    run_id = await api.start(sid, "count to 100000")
    stream = asyncio.ensure_future(_all_messages(api, run_id))
    await api.stream(run_id, stop_after=20)
    filler = fill(small_disk)

    messages = await asyncio.wait_for(stream, 30)
    last = messages[-1]
    assert last.get("terminal") is True or last.get("type") == "closed", last
    assert "disk" in (last.get("message") or last.get("payload", {}).get("message", ""))

    code, err = await api.call("POST", "sessions", body={"title": "new"})
    assert code == 507 and "disk is full" in err["message"] and "Free some space" in err["message"]
    code, err = await api.call("PATCH", "sessions", sid, body={"title": "after"})
    assert code == 507
    code, session = await api.call("GET", "sessions", sid)
    assert code == 200 and session["title"] == "before"

    filler.unlink()
    session = await _settled(api, sid)
    assert session["pending_user_message"] is None, "settled once space returned"
    contents = [m["content"] for m in session["messages"]]
    assert contents[0] == "count to 100000" and contents[-1] == DISK_FULL_NOTE
    assert sum(1 for m in session["messages"] if m.get("type") == "interrupted") == 1
    journal = (hermes_state / "runs" / sid / f"{run_id}.jsonl").read_bytes()
    lines = journal.split(b"\n")
    assert lines[-1] == b"", "the journal ends on a whole line"
    rows = [json.loads(line) for line in lines[:-1]]
    assert [r["seq"] for r in rows] == list(range(1, len(rows) + 1))
    partial = "".join(r["payload"].get("text", "") for r in rows if r["event"] == "token").strip()
    assert partial and partial in contents
    code, listing = await api.call("GET", "sessions")
    assert not any(r.get("corrupt") for r in listing)
