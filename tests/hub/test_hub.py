"""hermes-jupyter on a real JupyterHub: two users, each with their own server, state and token.

Every request goes through the hub's configurable-http-proxy under `/user/<name>/` with a hub
API token, as a browser or a script on a shared hub would send it.
"""

from __future__ import annotations

import asyncio
import json
import time

import httpx

from .hub_process import HubProcess
from .hub_settings import ADMIN_BACKENDS, ALICE_HEARTBEAT_S, TOKEN_DELAY_S
from .idle_proxy import IdleTimeoutProxy
from .kernel_ws import KernelSession
from .user_api import UserApi

RUN_MIME = "application/vnd.hermes.run+json"


def api(hub: HubProcess, name: str, *, as_user: str | None = None) -> UserApi:
    """User `name`'s server, called with the token of `as_user` (default: its owner)."""
    return UserApi(hub.url, name, hub.users[as_user or name].token)


def test_each_user_server_loads_the_extension_behind_the_proxy(hub: HubProcess) -> None:
    for name in hub.users:
        user = api(hub, name)
        response = user.call("GET", "sessions")
        assert response.status_code == 200, response.text
        page = httpx.get(user.server_url + "lab", headers=user.headers, timeout=30)
        assert page.status_code == 200, page.text[:500]
        assert '"name": "hermes-jupyter"' in page.text  # the labextensions JupyterLab's page will load


async def test_rest_and_stream_work_under_the_user_prefix(hub: HubProcess) -> None:
    alice = api(hub, "alice")
    sid = alice.new_session(title="through the proxy")
    run_id = alice.start_run(sid, "count to 2")
    read = await alice.read_stream(await alice.open_stream(run_id))
    assert [r["seq"] for r in read.rows] == list(range(1, len(read.rows) + 1))
    assert read.text == "1 2" and read.ended and read.rows[-1]["event"] == "done"
    assert alice.wait_status(run_id, "completed")["last_seq"] == read.rows[-1]["seq"]
    events = alice.call("GET", f"runs/{run_id}/events", after_seq=1).json()
    assert [e["seq"] for e in events["events"]] == [r["seq"] for r in read.rows[1:]] and events["terminal"]
    session = alice.call("GET", f"sessions/{sid}").json()
    assert [m["role"] for m in session["messages"]] == ["user", "assistant"]
    # The session lives in alice's home (her persistent volume on a real hub), nowhere else.
    assert (hub.users["alice"].state_dir / "sessions" / f"{sid}.json").exists()
    assert not (hub.users["bob"].state_dir / "sessions" / f"{sid}.json").exists()


def test_admin_settings_outrank_the_users_own_config(hub: HubProcess) -> None:
    alice = api(hub, "alice")
    refused = alice.call("POST", "sessions", {"backend": "openai"})  # alice's ~/.jupyter allows it
    assert refused.status_code == 400 and "not available" in refused.json()["message"]
    assert "allowed: demo" in refused.json()["detail"]  # what the admin allows, in the details
    for backend in ADMIN_BACKENDS:
        assert alice.call("POST", "sessions", {"backend": backend}).status_code == 201


async def test_a_users_token_is_refused_on_another_users_server(hub: HubProcess) -> None:
    bob = api(hub, "bob")
    sid = bob.new_session(title="bob's")
    run_id = bob.start_run(sid, "count to 1")
    intruder = api(hub, "bob", as_user="alice")
    attempts = {
        "list": intruder.call("GET", "sessions"),
        "read": intruder.call("GET", f"sessions/{sid}"),
        "rename": intruder.call("PATCH", f"sessions/{sid}", {"title": "mine now"}),
        "run": intruder.call("POST", f"sessions/{sid}/runs", {"message": "count to 3"}),
        "events": intruder.call("GET", f"runs/{run_id}/events"),
        "cancel": intruder.call("POST", f"runs/{run_id}/cancel", {}),
        "delete": intruder.call("DELETE", f"sessions/{sid}"),
    }
    assert {what: r.status_code for what, r in attempts.items()} == dict.fromkeys(attempts, 403)
    assert await intruder.stream_status(run_id) == 403
    bob.wait_status(run_id, "completed")
    session = bob.call("GET", f"sessions/{sid}").json()
    assert session["title"] == "bob's" and [m["role"] for m in session["messages"]] == ["user", "assistant"]
    assert sid not in {row["session_id"] for row in api(hub, "alice").call("GET", "sessions").json()}


async def test_the_agent_process_never_sees_the_hub_token(hub: HubProcess) -> None:
    # The hermes backend here runs tests/hub/env_report_runner.py, which answers with a report on
    # the environment the single-user server really gave it.
    alice = api(hub, "alice")
    sid = alice.new_session(backend="hermes")
    run_id = alice.start_run(sid, "what can you see?")
    alice.wait_status(run_id, "completed")
    answer = alice.call("GET", f"sessions/{sid}").json()["messages"][-1]["content"]
    report = json.loads(answer)
    assert report["parent_pid"] == hub.users["alice"].server_pid  # spawned by alice's single-user server
    assert "JUPYTERHUB_API_TOKEN" in report["parent_secret_names"]  # which did hold a hub token
    assert report["jupyterhub_user"] == "alice"  # the real hub environment, minus its secrets
    assert not {"JUPYTERHUB_API_TOKEN", "JPY_API_TOKEN", "HERMES_JUPYTER_SERVER_TOKEN"} & set(report["names"])
    assert report["leaked_as"] == []  # nor under any other name


async def test_stream_outlives_the_proxy_idle_timeout_thanks_to_heartbeats(hub: HubProcess) -> None:
    # A front proxy drops connections idle for 0.6 s; the demo agent pauses 1.2 s before each token.
    # alice's server sends a heartbeat after 0.15 s of quiet (her ~/.jupyter config), bob's only after
    # the default 15 s, so only alice's stream stays up; bob resumes from his cursor.
    idle_s = 0.6
    assert ALICE_HEARTBEAT_S < idle_s < TOKEN_DELAY_S
    front = IdleTimeoutProxy(hub.port, idle_s).start()
    try:
        alice, bob = api(hub, "alice"), api(hub, "bob")
        alice_run = alice.start_run(alice.new_session(), "count to 3")
        bob_run = bob.start_run(bob.new_session(), "count to 3")
        alice_ws, bob_ws = await alice.open_stream(alice_run, via=front.url), await bob.open_stream(bob_run, via=front.url)
        alice_read, bob_read = await asyncio.gather(alice.read_stream(alice_ws), bob.read_stream(bob_ws))
    finally:
        front.stop()
    assert alice_read.ended and alice_read.text == "1 2 3"
    assert alice_read.heartbeats >= 3  # at least one in each pause before a token
    assert not bob_read.ended and front.dropped == 1  # without heartbeats the front proxy cut bob off
    cursor = bob_read.rows[-1]["seq"] if bob_read.rows else 0
    rest = await bob.read_stream(await bob.open_stream(bob_run, after_seq=cursor))
    assert [r["seq"] for r in bob_read.rows + rest.rows] == list(range(1, len(bob_read.rows + rest.rows) + 1))
    assert "".join(r["payload"].get("text", "") for r in bob_read.rows + rest.rows if r["event"] == "token") == "1 2 3"


async def test_magic_in_a_user_kernel_finds_its_own_server(hub: HubProcess) -> None:
    alice = api(hub, "alice")
    async with KernelSession(alice.server_url, alice.token) as kernel:
        loaded = await kernel.execute("%load_ext hermes_jupyter")
        assert loaded.status == "ok", loaded.error
        found = await kernel.execute(
            "from hermes_jupyter.api_client import find_server\n"
            "s = find_server()\nprint(s.source, s.url)")
        assert found.status == "ok", found.error
        source, url = found.text.split()
        assert url.endswith("/user/alice/"), found.text
        ran = await kernel.execute("%hermes count to 2", timeout_s=60)
        assert ran.status == "ok", ran.error
        final = ran.bundles(RUN_MIME)[-1]
        assert final["status"] == "completed"
        # Without the server's URL hint, the hub's environment leads back to alice's server, where the
        # kernel's own token (never the hub token: the kernel does not inherit it) lists its own sessions.
        by_hub = await kernel.execute(
            "import os\nfrom hermes_jupyter.api_client import HermesClient, find_server\n"
            "env = {k: v for k, v in os.environ.items() if k not in ('HERMES_JUPYTER_SERVER_URL', 'HERMES_JUPYTER_URL')}\n"
            "s = find_server(env, running_servers=lambda: [])\n"
            "print(s.source, s.url, ' '.join(r['session_id'] for r in HermesClient(s).list_sessions()))")
        assert by_hub.status == "ok", by_hub.error
        held = await kernel.execute("import os\nprint(sorted(k for k in os.environ if k.endswith('API_TOKEN')))")
        assert held.text.strip() == "[]", held.text  # neither JUPYTERHUB_API_TOKEN nor JPY_API_TOKEN
    hub_source, hub_url, *hub_sessions = by_hub.text.split()
    assert (hub_source, source) == ("jupyterhub", "parent-server")
    assert hub_url.endswith("/user/alice/") and final["session_id"] in hub_sessions
    assert alice.call("GET", f"runs/{final['run_id']}").json()["status"] == "completed"
    assert api(hub, "bob").call("GET", f"sessions/{final['session_id']}").status_code == 404


def test_a_server_culled_mid_run_settles_its_turn(hub: HubProcess) -> None:
    # The idle culler stops a server with the hub's DELETE, as this test does: a stop signal, then
    # SIGKILL once the grace period is over (about 2 s here). alice's drain (0.3 s) fits in it, so her
    # server settles the turn itself (server_shutdown); bob's (the default 10 s) does not, so his is
    # killed mid-run and repaired when his server starts again (server_restart). Both keep the partial
    # output, recovered from the journal on their own volume.
    users = {name: api(hub, name) for name in ("alice", "bob")}
    runs = {}
    for name, user in users.items():
        sid = user.new_session(title="culled")
        runs[name] = (sid, user.start_run(sid, "count to 100"))
    for name, (sid, run_id) in runs.items():
        _wait_tokens(users[name], run_id, 2)
    hub.stop_servers(list(users))
    hub.timings.respawn_s.update(hub.start_servers(list(users)))
    for name, cause in (("alice", "server_shutdown"), ("bob", "server_restart")):
        sid, run_id = runs[name]
        messages = users[name].call("GET", f"sessions/{sid}").json()["messages"]
        user_turn, partial, marker = messages[-3:]
        assert user_turn["content"] == "count to 100" and partial["content"].startswith("1 2")
        assert (marker["type"], marker["interruption_cause"]) == ("interrupted", cause), marker
        assert "partial output above was recovered from the run journal" in marker["content"]
        assert users[name].call("GET", f"runs/{run_id}").json()["status"] == "interrupted"


def _wait_tokens(user: UserApi, run_id: str, n: int, timeout_s: float = 30) -> None:
    deadline = time.monotonic() + timeout_s
    while True:
        events = user.call("GET", f"runs/{run_id}/events").json()["events"]
        if sum(1 for e in events if e["event"] == "token") >= n:
            return
        assert time.monotonic() < deadline, events
        time.sleep(0.1)
