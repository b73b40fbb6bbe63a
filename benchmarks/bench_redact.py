"""Per-token cost and held text of the stream redaction, printed as JSON (never asserted in tests).

`per_delta` is redacting each delta's payload alone (`Redactor.value`: what the sink did before
the stream redactor; it misses keys split across deltas). `stream` is `StreamRedactor.feed` (hold
what could still become a secret part, redact what is released) plus the flush at the end. With
`--baseline FILE` an older `redact_stream.py` (e.g. the one that held every delta's trailing word:
`git show 4200453:hermes_jupyter/redact_stream.py > /tmp/word.py`) runs too, alternated with the
others in the same process, so a busy machine slows all alike. The redactor knows a few secrets,
as a server started with keys in its environment does. Texts:

- `prose`: ordinary words, spaces and punctuation (the common case);
- `secret_words`: prose that talks about tokens, keys and passwords (the name gate opens);
- `code`: Python with assignments, dotted names, long identifiers;
- `cjk`: Chinese text without spaces.

Each is split two ways: 4-character deltas (cut mid-word), and deltas as a model's tokens come
(a word with its leading space; 2 characters of Chinese). `held` reports, per delta, the mean
number of characters held back after it and the share of deltas released whole (nothing held:
the viewer sees the whole delta at once, not one delta late).

Usage: python benchmarks/bench_redact.py [--quick] [--baseline FILE]
"""

from __future__ import annotations

import importlib.util
import json
import re
import statistics
import sys
import time
from types import ModuleType
from typing import Any, Callable

from hermes_jupyter.redact import Redactor
from hermes_jupyter.redact_stream import StreamRedactor

REDACTOR = Redactor.from_values([
    "sk-proj-knownKey0123456789abcdef", "plantedKEY-4f1c9e0a77b2-hj", "hjk_" + "k" * 43, "a server password",
])
TEXTS = {
    "prose": "The quick brown fox jumps over the lazy dog, then rests; after a while it runs again. " * 60,
    "secret_words": "Each token of the API key is checked; the password and the secret stay hidden. " * 60,
    "code": "df = pd.read_csv(path)\nresult = df.groupby('region').agg({'sales': 'sum'})\nprint(result.head(10))\n" * 60,
    "cjk": "这是一个没有空格的中文句子，模型会一个字一个字地输出它。" * 120,
}


def chars(text: str, size: int = 4) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def tokens(text: str) -> list[str]:
    """Deltas as a model's tokens come: a word with the space before it (Chinese: 2 characters)."""
    return chars(text, 2) if text.isascii() is False and " " not in text else re.findall(r"\s*\S+|\s+", text)


def per_delta(_: Any, pieces: list[str]) -> None:
    value = REDACTOR.value
    for piece in pieces:
        value({"text": piece})


def stream(cls: type, pieces: list[str]) -> None:
    redactor = cls(REDACTOR)
    feed = redactor.feed
    for piece in pieces:
        feed("token", piece)
    redactor.flush()


def held(cls: type, pieces: list[str]) -> dict[str, float]:
    redactor = cls(REDACTOR)
    sizes = []
    for piece in pieces:
        redactor.feed("token", piece)
        sizes.append(len(redactor.held))
    return {"mean_chars": round(statistics.fmean(sizes), 2), "released_whole": round(sizes.count(0) / len(sizes), 3)}


def ns_per_delta(fn: Callable[[Any, list[str]], None], cls: Any, pieces: list[str]) -> float:
    start = time.perf_counter_ns()
    fn(cls, pieces)
    return (time.perf_counter_ns() - start) / len(pieces)


def load(path: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location("hermes_jupyter._baseline_redact_stream", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    module.__package__ = "hermes_jupyter"  # its relative imports resolve against the installed package
    spec.loader.exec_module(module)
    return module


def main() -> None:
    rounds = 5 if "--quick" in sys.argv else 41
    runs: dict[str, tuple[Callable[[Any, list[str]], None], Any]] = {
        "per_delta": (per_delta, None), "stream": (stream, StreamRedactor)}
    if "--baseline" in sys.argv:
        runs["baseline"] = (stream, load(sys.argv[sys.argv.index("--baseline") + 1]).StreamRedactor)
    out: dict[str, Any] = {}
    for name, text in TEXTS.items():
        for split, pieces in (("4_chars", chars(text)), ("tokens", tokens(text))):
            times: dict[str, list[float]] = {run: [] for run in runs}
            for _ in range(rounds):  # alternated, so a busy machine slows all alike
                for run, (fn, cls) in runs.items():
                    times[run].append(ns_per_delta(fn, cls, pieces))
            row: dict[str, Any] = {"deltas": len(pieces)}
            row.update({f"{run}_ns": round(statistics.median(t)) for run, t in times.items()})
            row.update({f"held_{run}": held(cls, pieces) for run, (_, cls) in runs.items() if cls is not None})
            out[f"{name}/{split}"] = row
    print(json.dumps({"per_token_cost": out}, indent=2))


if __name__ == "__main__":
    main()
