"""A run's redactor learns values masked by name; error text is masked by shape; Hermes' keys are known.

Each test fails on the old code: a value masked by its name was shown bare two lines below,
a key in a provider's error text that no pattern knows was kept, and Hermes' own keys were
unknown to the server.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from hermes_jupyter.agents.hermes.home_secrets import MAX_FILE_BYTES, known_secrets
from hermes_jupyter.agents.tools import NotebookToolRegistry, NotebookTools
from hermes_jupyter.agents.base import NotebookBinding, TurnRequest
from hermes_jupyter.redact import Redactor, mask_shapes
from hermes_jupyter.redact_run import MAX_LEARNED, RunRedactor

from .fakes.recording_sink import RecordingSink

AWS = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
UPSTREAM = "zq9Xw2LmT7vB4nK8pR3sYh6Jd1Fc5Ga0"


def test_a_value_masked_by_its_name_is_masked_everywhere_in_that_result_and_after() -> None:
    run = RunRedactor(Redactor())
    result = f"aws_secret_access_key = {AWS}\nregion = eu-west-1\nprint(key) -> {AWS}"
    run.learn_from(result)
    assert AWS not in run.text(result) and run.text(result).count("[redacted]") == 2
    assert run.text(f"The model says: your key is {AWS}.") == "The model says: your key is [redacted]."


def test_plain_words_and_code_are_not_learned_and_the_count_is_bounded() -> None:
    run = RunRedactor(Redactor())
    run.learn_from("author = Shakespeare\nauth: required\ntoken = get_token()")
    assert run.learned == frozenset()
    run.learn_from("\n".join(f"api_key_{i} = Value{i:04d}xyz" for i in range(MAX_LEARNED + 10)))
    assert len(run.learned) == MAX_LEARNED


class _Access:
    def __init__(self, outputs: dict[str, Any]) -> None:
        self.outputs = outputs

    async def list_variables(self, kernel_id: str) -> dict[str, Any]:
        return {"variables": [{"name": "api_token", "type": "str", "preview": f"'{AWS}'"}]}

    async def read_notebook(self, path: str) -> tuple[str, dict[str, Any]]:
        cells = [{"cell_type": "code", "source": "print(creds)", "outputs": [
            {"output_type": "stream", "name": "stdout", "text": f"aws_secret_access_key = {AWS}\n{AWS}\n"}]}]
        return path, {"cells": cells, "metadata": {}}


async def test_the_notebook_tools_mask_a_named_value_printed_bare_and_in_the_next_result() -> None:
    tools = NotebookTools(access=_Access({}), broker=None, redactor=Redactor())  # type: ignore[arg-type]
    request = TurnRequest(session_id="s", run_id="r", message="m", history=[],
                          notebook=NotebookBinding(notebook_path="a.ipynb", kernel_id="k"))
    registry = NotebookToolRegistry(tools, request, RecordingSink())
    text, _ = await registry.call("read_notebook", {})
    assert AWS not in text and text.count("[redacted]") == 2
    listing, _ = await registry.call("list_variables", {})
    assert AWS not in listing


def test_a_key_no_pattern_knows_is_masked_by_shape_in_error_text_only() -> None:
    body = f"HTTP 401: upstream rejected key {UPSTREAM} (request req_7a3f)"
    assert Redactor().text(body) == body  # neither known nor shaped like a provider key
    assert UPSTREAM not in mask_shapes(body) and "request req_7a3f" in mask_shapes(body)
    for ordinary in ("model gpt-4o-mini-2024-07-18 not found", "/home/user/.cache/hermes-agent-venv/bin/python",
                     "context_length_exceeded for claude-3-5-sonnet"):
        assert mask_shapes(ordinary) == ordinary
    assert "[redacted]" in mask_shapes("key d41d8cd98f00b204e9800998ecf8427e rejected")


def _home(tmp_path: Path) -> Path:
    home = tmp_path / "hermes_home"
    (home / "profiles" / "work").mkdir(parents=True)
    (home / "config.yaml").write_text(
        "model:\n  default: stub-model\n  api_key: cfgKey-0a1b2c3d4e5f\n  max_tokens: 4096\n"
        "providers:\n  local:\n    key_env: OPENAI_API_KEY\n    secrets:\n      - nestedSecret-99887766\n"
        "anchors: &a {token: aliasToken-1234abcd}\nmore: [*a, *a, *a]\n", encoding="utf-8")
    (home / ".env").write_text("# keys\nexport OPENROUTER_API_KEY='envKey-ffeeddcc'\nDEBUG=1\nLOG_LEVEL=info\n",
                               encoding="utf-8")
    (home / "auth.json").write_text('{"providers": {"nous": {"access_token": "oauthTok-13572468"}}}', encoding="utf-8")
    (home / "profiles" / "work" / ".env").write_text("ANTHROPIC_API_KEY=profKey-24681357\n", encoding="utf-8")
    return home


def test_hermes_home_keys_are_known_secrets_and_names_are_not(tmp_path: Path) -> None:
    values = set(known_secrets(_home(tmp_path)))
    assert values == {"cfgKey-0a1b2c3d4e5f", "nestedSecret-99887766", "aliasToken-1234abcd", "envKey-ffeeddcc",
                      "oauthTok-13572468", "profKey-24681357"}


def test_hermes_home_links_fifos_and_huge_files_are_not_read(tmp_path: Path) -> None:
    home = tmp_path / "h"
    outside = tmp_path / "outside"
    (outside / "p").mkdir(parents=True)
    (outside / "p" / ".env").write_text("OPENAI_API_KEY=outsideKey-123456\n", encoding="utf-8")
    (outside / "config.yaml").write_text("api_key: linkedKey-987654\n", encoding="utf-8")
    (home / "profiles").mkdir(parents=True)
    (home / "profiles" / "linked").symlink_to(outside / "p")
    (home / "config.yaml").symlink_to(outside / "config.yaml")
    os.mkfifo(home / ".env")
    (home / "auth.json").write_text('{"api_key": "' + "k" * MAX_FILE_BYTES + '"}', encoding="utf-8")
    assert known_secrets(home) == []


@pytest.mark.parametrize("text", ["cfgKey-0a1b2c3d4e5f", "profKey-24681357"])
def test_the_hermes_backend_tells_its_runs_the_configured_keys(tmp_path: Path, text: str) -> None:
    from hermes_jupyter.agents.hermes.backend import HermesAgent
    from hermes_jupyter.runs.run import run_redactor

    backend = HermesAgent(env={"HERMES_HOME": str(_home(tmp_path))}, command=["true"])
    redactor = run_redactor(Redactor(), backend)
    assert redactor.text(f"the provider said: bad key {text}") == "the provider said: bad key [redacted]"
