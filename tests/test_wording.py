"""A run's button words are written once (hermes_jupyter/wording.py) and read by every client."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_jupyter.kernel.view import widget_class
from hermes_jupyter.wording import RUN_CONTROLS

ROOT = Path(__file__).resolve().parent.parent
#: Where the words are used; none may spell them out again.
CLIENTS = [ROOT / "hermes_jupyter" / "kernel" / "static" / "view.js",
           *sorted((ROOT / "labextension" / "src").rglob("*.ts*"))]
GENERATED = ROOT / "labextension" / "src" / "api" / "generated.ts"


def test_the_kernel_widget_is_sent_the_shared_words() -> None:
    cls = widget_class()
    if cls is None:
        pytest.skip("anywidget is not installed")
    assert cls().words == RUN_CONTROLS


@pytest.mark.parametrize("key", ["stopping", "unqueue", "unqueue_title", "queued", "continuing", "continue_title"])
def test_no_client_spells_a_shared_word_itself(key: str) -> None:
    word = RUN_CONTROLS[key]
    written = [str(p.relative_to(ROOT)) for p in CLIENTS
               if p != GENERATED and "__tests__" not in p.parts and word in p.read_text(encoding="utf-8")]
    assert written == [], f"{word!r} is spelled out in {written}: use RUN_CONTROLS (hermes_jupyter/wording.py)"
    assert word in GENERATED.read_text(encoding="utf-8")
