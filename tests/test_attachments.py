"""Attachments: the typed shape is enforced, texts are cut to the caps and redacted, the model reads fenced blocks."""

from __future__ import annotations

import pytest

from hermes_jupyter.attachments import (
    MAX_ATTACHMENTS,
    MAX_MODEL_CHARS,
    MAX_OUTPUT_CHARS,
    MAX_TEXT_CHARS,
    AttachmentError,
    model_message,
    validate_attachments,
)
from hermes_jupyter.redact import Redactor
from hermes_jupyter.transcript import api_messages

REDACTOR = Redactor.from_values(["sk-live-planted-secret-0123456789"])


def test_a_cell_attachment_keeps_its_fields_and_drops_nothing_it_knows() -> None:
    raw = [{"kind": "cell", "label": "In [3]", "text": "1/0", "cell_id": "c-3", "language": "python",
            "path": "a.ipynb", "output": "ZeroDivisionError: division by zero"}]
    assert validate_attachments(raw, REDACTOR) == raw


@pytest.mark.parametrize("raw", [
    "a string", [{"kind": "image", "label": "x", "text": ""}], [{"kind": "cell", "label": "x"}],
    [{"kind": "cell", "label": "  ", "text": "x"}], [{"kind": "cell", "label": "x", "text": "y", "shell": "rm"}],
    [{"kind": "file", "label": "x" * 201, "text": "y"}],
    [{"kind": "variable", "label": "x", "text": "y"}] * (MAX_ATTACHMENTS + 1),
])
def test_attachments_of_the_wrong_shape_or_too_many_are_refused(raw: object) -> None:
    with pytest.raises(AttachmentError):
        validate_attachments(raw, REDACTOR)


def test_long_texts_are_cut_to_their_caps_with_a_note() -> None:
    [kept] = validate_attachments([{"kind": "file", "label": "big.csv", "text": "x" * (MAX_TEXT_CHARS + 50),
                                    "output": "y" * (MAX_OUTPUT_CHARS + 7)}], REDACTOR)
    assert kept["text"].startswith("x" * MAX_TEXT_CHARS) and kept["text"].endswith("[50 more characters not attached]")
    assert kept["output"].endswith("[7 more characters not attached]")


def test_secrets_in_an_attachment_are_masked_before_anything_keeps_them() -> None:
    [kept] = validate_attachments([{"kind": "selection", "label": "sel", "text": "key = 'sk-live-planted-secret-0123456789'",
                                    "output": "token sk-live-planted-secret-0123456789"}], REDACTOR)
    assert "sk-live-planted-secret-0123456789" not in kept["text"] + kept["output"]


def test_the_model_reads_the_message_then_each_attachment_fenced_and_labelled() -> None:
    text = model_message("Why does this fail?", [
        {"kind": "cell", "label": "In [3]", "text": "x = ```\n1/0", "language": "python", "path": "a.ipynb",
         "output": "ZeroDivisionError"},
    ])
    assert text.startswith("Why does this fail?\n\nThe user attached this context")
    assert "[cell: In [3] from a.ipynb]\n````python\nx = ```\n1/0\n````" in text
    assert "Its output:\n```\nZeroDivisionError\n```" in text
    assert model_message("plain", []) == "plain"


def test_attachments_beyond_the_model_budget_are_named_not_sent() -> None:
    many = [{"kind": "file", "label": f"f{i}", "text": "z" * MAX_TEXT_CHARS} for i in range(4)]
    text = model_message("read these", many)
    assert len(text) < MAX_MODEL_CHARS + 1000
    assert "[file: f3 — left out: the attachments are too long]" in text


def test_a_later_turn_still_sends_an_earlier_turns_attachments_to_the_model() -> None:
    rows = [{"role": "user", "content": "look", "attachments": [{"kind": "variable", "label": "df", "text": "shape 3x2"}]}]
    assert "[variable: df]\n```\nshape 3x2\n```" in api_messages(rows)[0]["content"]

