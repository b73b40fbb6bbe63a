"""Per-token cost of redaction on the journal's hot path, printed as JSON (never asserted in tests).

`per_delta` is what the sink did before the stream redactor: `Redactor.value` on each delta's
payload. `stream` is what it does now: `StreamRedactor.feed` (hold the tail that could become a
secret, redact what is released), plus the flush at the end. Both run in the same process on the
same texts, split as providers stream them (about 4 characters a delta), with a redactor that
knows a few secrets (as a server started with keys in its environment does):

- `prose`: ordinary words, spaces and punctuation (the common case);
- `secret_words`: prose that talks about tokens, keys and passwords (the name gate opens);
- `code`: Python with assignments, dotted names, long identifiers;
- `cjk`: Chinese text without spaces.

Usage: python benchmarks/bench_redact.py [--quick]
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from typing import Callable

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


def deltas(text: str, size: int = 4) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def per_delta(pieces: list[str]) -> None:
    value = REDACTOR.value
    for piece in pieces:
        value({"text": piece})


def stream(pieces: list[str]) -> None:
    redactor = StreamRedactor(REDACTOR)
    feed = redactor.feed
    for piece in pieces:
        feed("token", piece)
    redactor.flush()


def ns_per_delta(fn: Callable[[list[str]], None], pieces: list[str]) -> float:
    start = time.perf_counter_ns()
    fn(pieces)
    return (time.perf_counter_ns() - start) / len(pieces)


def main() -> None:
    rounds = 5 if "--quick" in sys.argv else 41
    out: dict[str, dict[str, float]] = {}
    for name, text in TEXTS.items():
        pieces = deltas(text)
        before: list[float] = []
        after: list[float] = []
        for _ in range(rounds):  # alternated, so a busy machine slows both alike
            before.append(ns_per_delta(per_delta, pieces))
            after.append(ns_per_delta(stream, pieces))
        b, a = statistics.median(before), statistics.median(after)
        out[name] = {"deltas": len(pieces), "per_delta_ns": round(b), "stream_ns": round(a), "ratio": round(a / b, 2)}
    print(json.dumps({"per_token_cost": out}, indent=2))


if __name__ == "__main__":
    main()
