"""`%hermes continue` is a command, not a prompt; it needs a session with something to continue."""

from __future__ import annotations

import pytest

from hermes_jupyter.kernel.magic import Request, UsageError, parse


def test_continue_is_parsed_as_a_command_with_an_optional_session() -> None:
    assert parse("continue", None) == Request("continue")
    assert parse("--session notes continue", None) == Request("continue", session="notes")
    assert parse("", "continue") == Request("ask", "continue")  # a cell body `continue` is a prompt
    with pytest.raises(UsageError):
        parse("--new continue", None)
