"""A stand-in for runner.py that misbehaves on request, for the supervision paths of HermesAgent.

Real hermes-agent cannot be made to hang or die on cue; this speaks the same wire protocol
(ready, delta, approval_request, result) and reacts to the turn's message: `wedge` streams one
token and then ignores everything, including interrupts; `die` writes a line to stderr and exits;
`warn TEXT` writes TEXT to stderr and answers `ok`; `ask` requests an approval and answers with
the choice it gets (or stops on an interrupt); anything else answers `ok`.
It runs under any Python and imports only the standard library.
"""

from __future__ import annotations

import json
import os
import sys
import time


def send(message: dict[str, object]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def main() -> None:
    send({"ev": "ready", "protocol": 1, "hermes_version": "scripted", "pid": os.getpid()})
    for line in sys.stdin:
        op = json.loads(line)
        if op.get("op") != "turn":
            continue
        run, message = op["run"], op["message"]
        send({"ev": "started", "run": run, "session_id": "scripted-session"})
        if message == "die":
            sys.stderr.write("dying during this turn\n")
            sys.stderr.flush()
            os._exit(7)
        if message.startswith("warn "):
            sys.stderr.write(message[5:] + "\n")
            sys.stderr.flush()
        if message == "wedge":
            send({"ev": "delta", "run": run, "text": "stuck"})
            while True:
                time.sleep(60)
        answer, interrupted = ask(run) if message == "ask" else ("ok", False)
        send({"ev": "delta", "run": run, "text": answer})
        send({"ev": "result", "run": run, "final_response": answer, "interrupted": interrupted,
              "context": [{"role": "assistant", "content": answer}], "usage": {}, "session_id": "scripted-session"})


def ask(run: str) -> tuple[str, bool]:
    """Request an approval, then wait for its answer or an interrupt: (text, interrupted)."""
    send({"ev": "approval_request", "run": run, "approval_id": f"{run}-a1", "command": "rm -rf /",
          "description": "delete in root path", "options": ["allow_once", "deny"]})
    for line in sys.stdin:
        op = json.loads(line)
        if op.get("op") == "interrupt" and op.get("run") == run:
            return "stopped", True
        if op.get("op") == "approval" and op.get("run") == run:
            return str(op.get("choice")), False
    return "stdin closed", False


if __name__ == "__main__":
    main()
