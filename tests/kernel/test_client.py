"""Finding the server (docs/notebook.md order) and following a run's stream across drops."""

from __future__ import annotations

from typing import Any

import pytest

from hermes_jupyter.api_client import HermesClient, RunStream, ServerNotFound, find_server

from .flaky_stream_server import FlakyRun, FlakyServer, make_rows


def no_servers() -> list[dict[str, Any]]:
    return []


def test_explicit_url_wins_over_everything() -> None:
    env = {
        "HERMES_JUPYTER_URL": "http://h:1/x", "HERMES_JUPYTER_TOKEN": "t1",
        "HERMES_JUPYTER_SERVER_URL": "http://h:2/", "HERMES_JUPYTER_SERVER_TOKEN": "t2",
        "JUPYTERHUB_SERVICE_URL": "http://h:3/user/a/",
    }
    info = find_server(env, running_servers=no_servers)
    assert (info.url, info.token, info.source) == ("http://h:1/x/", "t1", "HERMES_JUPYTER_URL")
    assert info.api_url == "http://h:1/x/hermes/api/"


def test_server_that_started_the_kernel_comes_second() -> None:
    env = {"HERMES_JUPYTER_SERVER_URL": "http://h:2/a%40b/", "HERMES_JUPYTER_SERVER_TOKEN": "t2",
           "HERMES_JUPYTER_SERVER_ROOT": "/srv"}
    info = find_server(env, running_servers=no_servers)
    assert (info.url, info.token, info.source, info.root_dir) == ("http://h:2/a%40b/", "t2", "parent-server", "/srv")


def test_runtime_files_match_the_parent_pid() -> None:
    servers = [
        {"pid": 10, "url": "http://h:10/", "token": "a", "root_dir": "/a"},
        {"pid": 20, "url": "http://h:20/lab/", "token": "b", "root_dir": "/b"},
    ]
    info = find_server({"JPY_PARENT_PID": "20"}, running_servers=lambda: servers, parent_pid=1)
    assert (info.url, info.token, info.root_dir) == ("http://h:20/lab/", "b", "/b")
    info = find_server({}, running_servers=lambda: servers, parent_pid=10)
    assert info.url == "http://h:10/"
    with pytest.raises(ServerNotFound):
        find_server({}, running_servers=lambda: servers, parent_pid=99)  # two servers, neither ours: no guess


def test_single_running_server_is_used() -> None:
    info = find_server({}, running_servers=lambda: [{"pid": 5, "url": "http://h:5/", "token": ""}], parent_pid=1)
    assert info.source == "runtime-file"


def test_jupyterhub_environment_comes_last() -> None:
    env = {"JUPYTERHUB_SERVICE_URL": "http://127.0.0.1:4567/user/ann/", "JUPYTERHUB_API_TOKEN": "hub"}
    info = find_server(env, running_servers=no_servers)
    assert (info.url, info.token, info.source) == ("http://127.0.0.1:4567/user/ann/", "hub", "jupyterhub")
    info = find_server({"JUPYTERHUB_SERVICE_PREFIX": "/user/ann", "JUPYTERHUB_API_TOKEN": "hub"}, running_servers=no_servers)
    assert info.url == "http://127.0.0.1:8888/user/ann/"


def test_nothing_found_says_how_to_fix_it() -> None:
    with pytest.raises(ServerNotFound, match="HERMES_JUPYTER_URL"):
        find_server({}, running_servers=no_servers)


def drain(stream: RunStream) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    while (batch := stream.get_batch(5.0)) is not None:
        rows.extend(batch)
    return rows


def test_stream_resumes_from_its_cursor_without_loss_or_duplicates() -> None:
    run = FlakyRun(make_rows(50), drop_every=7)
    with FlakyServer(run) as server:
        client = HermesClient(server.info)
        stream = client.stream("run1").start()
        rows = drain(stream)
        client.close()
    assert [r.seq for r in rows] == list(range(1, 51))
    assert rows[-1].terminal is True
    assert len(run.connects) >= 7 and run.connects[0] == 0
    assert run.connects == sorted(run.connects)  # every reconnect asked for the rows after the last one seen


def test_stream_falls_back_to_polling_when_websockets_are_refused() -> None:
    run = FlakyRun(make_rows(23), refuse_ws=True)
    with FlakyServer(run) as server:
        client = HermesClient(server.info)
        stream = RunStream(client, "run1", retry_delay_s=0.01).start()
        rows = drain(stream)
        client.close()
    assert [r.seq for r in rows] == list(range(1, 24))


def test_stream_of_a_dead_run_ends_without_a_terminal_row() -> None:
    run = FlakyRun(make_rows(12, terminal=False), drop_every=5, status="interrupted")
    with FlakyServer(run) as server:
        client = HermesClient(server.info)
        rows = drain(client.stream("run1", after_seq=3).start())
        client.close()
    assert [r.seq for r in rows] == list(range(4, 13))
