"""A stand-in for the Hermes runner that answers every turn with a report on its own environment.

Why: the question is what an agent process started by a user's single-user server can see,
and only a process the hermes backend really spawns (with its scrubbed environment, from the
environment the hub gave that server) can answer it. It speaks the runner's wire protocol
(ready, started, delta, result), reads its parent's environment from /proc to learn the hub
token it must not have, and imports only the standard library.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

SECRETS_OF_THE_PARENT = ("JUPYTERHUB_API_TOKEN", "JPY_API_TOKEN", "HERMES_JUPYTER_SERVER_TOKEN")


def send(message: dict[str, object]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def parent_environ() -> dict[str, str]:
    raw = Path(f"/proc/{os.getppid()}/environ").read_bytes()
    pairs = (item.split(b"=", 1) for item in raw.split(b"\0") if b"=" in item)
    return {k.decode(errors="replace"): v.decode(errors="replace") for k, v in pairs}


def report() -> dict[str, object]:
    parent = parent_environ()
    secrets = {name: parent[name] for name in SECRETS_OF_THE_PARENT if parent.get(name)}
    leaked = sorted(name for name, value in os.environ.items()
                    if any(secret and secret in value for secret in secrets.values()))
    return {
        "parent_pid": os.getppid(),
        "parent_secret_names": sorted(secrets),
        "names": sorted(os.environ),
        "leaked_as": leaked,
        "jupyterhub_user": os.environ.get("JUPYTERHUB_USER"),
    }


def main() -> None:
    send({"ev": "ready", "protocol": 1, "hermes_version": "env-report", "pid": os.getpid()})
    for line in sys.stdin:
        op = json.loads(line)
        if op.get("op") != "turn":
            continue
        run = op["run"]
        text = json.dumps(report(), sort_keys=True)
        send({"ev": "started", "run": run, "session_id": "env-report"})
        send({"ev": "delta", "run": run, "text": text})
        send({"ev": "result", "run": run, "final_response": text, "interrupted": False,
              "context": [{"role": "assistant", "content": text}], "usage": {}, "session_id": "env-report"})


if __name__ == "__main__":
    main()
