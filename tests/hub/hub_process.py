"""A real JupyterHub on 127.0.0.1: configurable-http-proxy, the dummy authenticator, local processes.

Why real: the proxy, the `/user/<name>/` prefixes, the hub's scope checks and the spawner's
environment are what break server extensions in production; a stand-in for any of them would
only test our own assumptions. The proxy comes from npm (`tests/hub/chp/package-lock.json`),
installed once into a cache dir; the hub and the single-user servers run from this venv, so
each user's server loads the hermes_jupyter extension installed here.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from ..server_process import free_port

CHP_SPEC_DIR = Path(__file__).with_name("chp")
SERVICE_NAME = "hermes-test"
SERVICE_SCOPES = ["admin:users", "admin:servers", "admin:server_state", "tokens"]
NPM_TIMEOUT_S = 300


def cache_root() -> Path:
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "hermes-jupyter"


def ensure_proxy() -> Path:
    """configurable-http-proxy from the pinned lockfile, installed with `npm ci` into the cache once.

    The install dir is keyed by the lockfile's content, so a changed pin gets a fresh install and
    an unchanged one costs nothing (the npm registry is only asked on the first run).
    """
    lock = (CHP_SPEC_DIR / "package-lock.json").read_bytes()
    prefix = cache_root() / f"chp-{hashlib.sha256(lock).hexdigest()[:12]}"
    binary = prefix / "node_modules" / ".bin" / "configurable-http-proxy"
    stamp = prefix / ".installed"
    prefix.mkdir(parents=True, exist_ok=True)
    with open(prefix.with_suffix(".lock"), "w") as guard:  # parallel test sessions install once
        fcntl.flock(guard, fcntl.LOCK_EX)
        if binary.exists() and stamp.exists():
            return binary
        npm = shutil.which("npm")
        if npm is None:
            raise RuntimeError("npm is not on PATH: it is needed to install configurable-http-proxy")
        for name in ("package.json", "package-lock.json"):
            shutil.copyfile(CHP_SPEC_DIR / name, prefix / name)
        done = subprocess.run([npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=prefix,
                              capture_output=True, text=True, timeout=NPM_TIMEOUT_S, check=False)
        if done.returncode != 0 or not binary.exists():
            raise RuntimeError(f"npm ci of configurable-http-proxy failed ({done.returncode}):\n{done.stderr[-3000:]}")
        stamp.write_text("ok\n")
    return binary


@dataclass
class HubUser:
    name: str
    home: Path
    token: str = ""
    server_pid: int | None = None

    @property
    def state_dir(self) -> Path:
        return self.home / ".hermes" / "jupyter"


@dataclass
class HubTimings:
    proxy_install_s: float = 0.0
    hub_start_s: float = 0.0
    spawn_s: dict[str, float] = field(default_factory=dict)
    respawn_s: dict[str, float] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {"proxy_install_s": round(self.proxy_install_s, 2), "hub_start_s": round(self.hub_start_s, 2),
                "spawn_s": {k: round(v, 2) for k, v in self.spawn_s.items()},
                "respawn_s": {k: round(v, 2) for k, v in self.respawn_s.items()}}


class HubProcess:
    """Start a hub over `root`, create users, spawn their servers, hand out their tokens, stop it all.

    `admin_config` is the `jupyter_server_config.json` an admin ships in the image (found through
    `JUPYTER_CONFIG_PATH`); `user_configs[name]` goes to that user's `~/.jupyter/`, which the
    single-user server reads with higher priority, as it would on a real hub.
    """

    def __init__(
        self,
        root: Path,
        *,
        users: Sequence[str],
        admin_config: Mapping[str, Any],
        user_configs: Mapping[str, Mapping[str, Any]] | None = None,
        spawn_timeout_s: float = 90,
    ) -> None:
        self.root = root
        self.user_names = list(users)
        self.admin_config = admin_config
        self.user_configs = dict(user_configs or {})
        self.spawn_timeout_s = spawn_timeout_s
        self.port = free_port()
        self.hub_port = free_port()
        self.proxy_api_port = free_port()
        self.service_token = secrets.token_hex(16)
        self.homes = root / "home"
        self.log_path = root / "hub.log"
        self.proc: subprocess.Popen[bytes] | None = None
        self.users: dict[str, HubUser] = {}
        self.timings = HubTimings()

    @property
    def url(self) -> str:
        """The proxy's public URL: everything a browser sees goes through here."""
        return f"http://127.0.0.1:{self.port}/"

    def user_url(self, name: str) -> str:
        return f"{self.url}user/{name}/"

    # -- lifecycle ---------------------------------------------------------------------------------
    def start(self, timeout_s: float = 60) -> HubProcess:
        started = time.monotonic()
        chp = ensure_proxy()
        self.timings.proxy_install_s = time.monotonic() - started
        config = self._write_config(chp)
        env = {name: value for name, value in os.environ.items()
               if not name.startswith(("JUPYTER", "HERMES_", "JPY_"))}
        env.update({"HOME": str(self.root / "hub-home"), "CONFIGPROXY_AUTH_TOKEN": secrets.token_hex(16)})
        log = open(self.log_path, "ab")  # noqa: SIM115 - owned by the process
        started = time.monotonic()
        # A session of its own: a stray child can be found by its group, never by its name.
        # No terminal on stdin: the servers must behave as they do under a real spawner, whoever runs pytest.
        self.proc = subprocess.Popen([sys.executable, "-m", "jupyterhub", "-f", str(config)], cwd=self.root,
                                     stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=env,
                                     start_new_session=True)
        log.close()
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"jupyterhub exited ({self.proc.returncode}): {self.log_tail()}")
            try:
                if httpx.get(self.url + "hub/api/", timeout=2).status_code == 200:
                    self.timings.hub_start_s = time.monotonic() - started
                    return self
            except httpx.TransportError:
                pass
            time.sleep(0.1)
        raise TimeoutError(f"jupyterhub did not answer through its proxy: {self.log_tail()}")

    def stop(self, timeout_s: float = 30) -> None:
        """SIGTERM the hub (it stops the user servers and the proxy), then kill by pid what is left."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout_s)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)
        self.proc = None
        pids = [u.server_pid for u in self.users.values() if u.server_pid]
        pid_file = self.root / "jupyterhub-proxy.pid"
        if pid_file.exists() and pid_file.read_text().strip().isdigit():
            pids.append(int(pid_file.read_text().strip()))
        for pid in pids:
            _kill_if_alive(pid, ("jupyterhub-singleuser", "configurable-http-proxy"))

    def log_tail(self, n_chars: int = 4000) -> str:
        return self.log_path.read_text(errors="replace")[-n_chars:] if self.log_path.exists() else ""

    # -- hub REST API, as the test service -----------------------------------------------------------
    def api(self, method: str, path: str, body: Any = None) -> httpx.Response:
        return httpx.request(method, self.url + "hub/api/" + path, json=body, timeout=30,
                             headers={"Authorization": f"token {self.service_token}"})

    def spawn_all(self) -> dict[str, HubUser]:
        """Start every user's server at once, wait until the hub routes to each, and mint their tokens.

        The tokens are what a user gets from the hub's token page: same permissions as the user.
        """
        for name in self.user_names:
            user = self.users[name] = HubUser(name, self.homes / name)
            self._write_user_config(user)
        self.timings.spawn_s.update(self.start_servers(self.user_names))
        for name, user in self.users.items():
            response = self.api("POST", f"users/{name}/tokens", {"note": "hermes hub test", "expires_in": 3600})
            assert response.status_code == 201, response.text
            user.token = response.json()["token"]
        return self.users

    def start_servers(self, names: Sequence[str]) -> dict[str, float]:
        """Ask the hub to start these users' servers together; seconds until each was ready."""
        started = time.monotonic()
        for name in names:
            response = self.api("POST", f"users/{name}/server")
            assert response.status_code in (201, 202), response.text
        took = {}
        for name in names:
            model = self._wait_ready(name)
            took[name] = time.monotonic() - started
            self.users[name].server_pid = (model["servers"][""].get("state") or {}).get("pid")
        return took

    def stop_servers(self, names: Sequence[str], timeout_s: float = 60) -> None:
        """Stop these users' servers as the idle culler does (the hub's DELETE), and wait until they are gone."""
        for name in names:
            response = self.api("DELETE", f"users/{name}/server")
            assert response.status_code in (202, 204), response.text
        deadline = time.monotonic() + timeout_s
        for name in names:
            while self.api("GET", f"users/{name}").json().get("servers"):
                assert time.monotonic() < deadline, f"server of {name} did not stop:\n{self.log_tail()}"
                time.sleep(0.1)
            self.users[name].server_pid = None

    def _wait_ready(self, name: str) -> dict[str, Any]:
        deadline = time.monotonic() + self.spawn_timeout_s
        while time.monotonic() < deadline:
            model = self.api("GET", f"users/{name}").json()
            server = model.get("servers", {}).get("")
            if server and server.get("ready"):
                return model  # type: ignore[no-any-return]
            if not server or not server.get("pending"):  # a failed spawn drops the server entry
                raise RuntimeError(f"server of {name} is neither ready nor pending: {model}\n{self.log_tail()}")
            time.sleep(0.1)
        raise TimeoutError(f"server of {name} not ready after {self.spawn_timeout_s} s:\n{self.log_tail()}")

    # -- config ------------------------------------------------------------------------------------
    def _write_config(self, chp: Path) -> Path:
        admin_dir = self.root / "etc-jupyter"
        admin_dir.mkdir(parents=True, exist_ok=True)
        (admin_dir / "jupyter_server_config.json").write_text(json.dumps(self.admin_config, indent=2))
        (self.root / "hub-home").mkdir(parents=True, exist_ok=True)
        singleuser = Path(sys.executable).with_name("jupyterhub-singleuser")
        settings = {
            "port": self.port, "hub_port": self.hub_port, "proxy_api": f"http://127.0.0.1:{self.proxy_api_port}",
            "chp": str(chp), "proxy_pid": str(self.root / "jupyterhub-proxy.pid"),
            "db": f"sqlite:///{self.root / 'jupyterhub.sqlite'}", "cookie": str(self.root / "cookie_secret"),
            "users": self.user_names, "homes": str(self.homes), "singleuser": str(singleuser),
            "admin_dir": str(admin_dir), "service": SERVICE_NAME, "service_token": self.service_token,
            "scopes": SERVICE_SCOPES,
        }
        path = self.root / "jupyterhub_config.py"
        path.write_text(HUB_CONFIG_TEMPLATE.format(settings=json.dumps(settings, indent=1)))
        return path

    def _write_user_config(self, user: HubUser) -> None:
        config = self.user_configs.get(user.name)
        if config:
            target = user.home / ".jupyter" / "jupyter_server_config.json"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(json.dumps(config, indent=2))


# What a hub admin writes; only the ports and paths are the test's.
HUB_CONFIG_TEMPLATE = '''\
import json
import signal
from pathlib import Path

from jupyterhub.spawner import SimpleLocalProcessSpawner

s = json.loads("""{settings}""")
c = get_config()  # noqa: F821

c.JupyterHub.ip = "127.0.0.1"
c.JupyterHub.port = s["port"]
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = s["hub_port"]
c.JupyterHub.db_url = s["db"]
c.JupyterHub.cookie_secret_file = s["cookie"]
c.JupyterHub.log_level = "INFO"
c.ConfigurableHTTPProxy.command = [s["chp"]]
c.ConfigurableHTTPProxy.api_url = s["proxy_api"]
c.ConfigurableHTTPProxy.pid_file = s["proxy_pid"]

c.JupyterHub.authenticator_class = "dummy"  # the test never logs in: tokens come from the service below
c.Authenticator.allowed_users = set(s["users"])


class PodLikeSpawner(SimpleLocalProcessSpawner):
    """Stops a server as Kubernetes deletes a pod (KubeSpawner, the idle culler): SIGTERM, a grace
    period, SIGKILL. (LocalProcessSpawner starts with SIGINT, which a server without a terminal
    takes as KeyboardInterrupt and exits on without running its extensions' shutdown.)"""

    grace_period_s = 2.0

    async def stop(self, now=False):
        if await self.poll() is not None:
            return
        if not now:
            await self._signal(signal.SIGTERM)
            await self.wait_for_death(self.grace_period_s)
            if await self.poll() is not None:
                return
        await self._signal(signal.SIGKILL)
        await self.wait_for_death(self.kill_timeout)


c.JupyterHub.spawner_class = PodLikeSpawner
c.SimpleLocalProcessSpawner.home_dir_template = s["homes"] + "/{{username}}"
c.Spawner.cmd = [s["singleuser"]]
c.Spawner.args = ["--allow-root"]  # the test machine runs as root
c.Spawner.start_timeout = 90
c.Spawner.http_timeout = 90
c.Spawner.environment = {{
    # Admin defaults for every user's server (allowed backends, model, approvals, ...).
    "JUPYTER_CONFIG_PATH": s["admin_dir"],
    # Each user's sessions and journals live in that user's home (the persistent volume on k8s).
    "HERMES_HOME": lambda spawner: str(Path(s["homes"]) / spawner.user.name / ".hermes"),
    "HERMES_JUPYTER_STATE_DIR": lambda spawner: str(Path(s["homes"]) / spawner.user.name / ".hermes" / "jupyter"),
}}

c.JupyterHub.services = [{{"name": s["service"], "api_token": s["service_token"]}}]
c.JupyterHub.load_roles = [{{"name": "hermes-test-admin", "scopes": s["scopes"], "services": [s["service"]]}}]
'''


def _kill_if_alive(pid: int, expected: tuple[str, ...]) -> None:
    """SIGTERM, then SIGKILL, a process our hub started, by its id (only if it is still that program)."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
        except OSError:
            return
        if not any(name in cmdline for name in expected):
            return  # gone, and the pid reused by something else
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and Path(f"/proc/{pid}").exists():
            time.sleep(0.05)
