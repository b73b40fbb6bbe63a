"""Redaction of streamed text: a secret split across deltas is masked as if it came whole.

A model writes a key in pieces (`sk-pro`, `j-abc1`, …); redacting each delta alone sees no key.
`StreamRedactor` keeps a carry-over per run: the tail of the text that could still become (part
of) a secret is held back and journaled with the next delta, or at a flush point (any other
event, the end of the run, a cancel). What is released is cut only where no secret can straddle
the cut, so the joined released text equals the redaction of the joined text (docs/journal.md,
"Streamed text and redaction").

Held back: the current word (the trailing run of non-space characters; in text without spaces,
such as Chinese, only its trailing run of ASCII characters), a whole run that contains `://`
(credentials in a URL), a `name=` / `"name": ` assignment whose value is still open, `Bearer` /
`token` waiting for its value, and a tail that begins a known secret containing spaces or
non-ASCII characters. Ordinary prose ending in a space holds nothing.
"""

from __future__ import annotations

import re
from typing import Final, Protocol

from .events import REASONING, TOKEN

#: Events whose `{text}` payloads are deltas of one stream of text.
TEXT_STREAMS: Final = frozenset({TOKEN, REASONING})

#: A held run longer than this (a blob without spaces) is released but for its last `KEEP_CHARS`,
#: so holding never copies more than a few KiB per delta. A secret longer than `KEEP_CHARS` inside
#: such a run could be cut; no key format comes close.
MAX_HOLD_CHARS: Final = 4096
KEEP_CHARS: Final = 512
#: How far before the current word a secret's name (`password = `, `Bearer `) is looked for.
_CONTEXT_CHARS: Final = 96
#: How many names before names (`password = token = …`) or secrets are followed back from the cut.
_MAX_CHAIN: Final = 8
#: Words one of which an open assignment or Authorization value needs nearby (a cheap gate).
_GATE: Final = re.compile(r"(?i)key|secret|token|passw|credential|auth|cookie|bearer")

#: An assignment to a secret name whose value reaches the end of the text (may still grow).
_OPEN_ASSIGNMENT: Final = re.compile(
    r"""(?ix)
    [A-Za-z0-9_.\-]*(?:api[_\-]?key|secret|token|passw(?:or)?d|passwd|credential|auth|cookie)[A-Za-z0-9_.\-]*
    ["']?\s*(?:[:=]\s*["']?[^\s"',;}&]*)?\Z
    """
)
#: A secret name (and its separator) just before the current word, which may be its value.
_NAME_BEFORE: Final = re.compile(
    r"""(?ix)
    [A-Za-z0-9_.\-]*(?:api[_\-]?key|secret|token|passw(?:or)?d|passwd|credential|auth|cookie)[A-Za-z0-9_.\-]*
    ["']?\s*(?:[:=]\s*["']?)?\Z
    """
)
#: `Bearer ` / `token ` just before the cut: the value that follows is masked by what precedes it.
#: (No `\b`: a mask replaced just before may make one in the joined text; holding more is harmless.)
_OPEN_AUTH: Final = re.compile(r"(?i)(?:bearer|token) ?\Z")


class TextRedactor(Protocol):
    """What the stream needs of a redactor (`Redactor` or the run's `RunRedactor`)."""

    def text(self, text: str) -> str: ...


class StreamRedactor:
    """The carry-over of one run's text deltas. Not thread-safe: the sink calls it under its lock."""

    __slots__ = ("_redactor", "_event", "_held", "_before", "_awkward", "_awkward_of")

    def __init__(self, redactor: TextRedactor) -> None:
        self._redactor = redactor
        self._event: str | None = None
        self._held = ""
        #: The last character released, when it was not a space: redacting the next piece with it
        #: in front keeps word boundaries (`\b`) as they are in the joined text.
        self._before = ""
        self._awkward: tuple[str, ...] = ()
        self._awkward_of: object = None

    @property
    def held(self) -> str:
        return self._held

    def feed(self, event: str, text: str) -> list[tuple[str, str]]:
        """The `(event, text)` rows to journal for one delta: the other stream's held text first (if
        the stream changed), then whatever of this one is safe to show. Often one row, sometimes none."""
        rows: list[tuple[str, str]] = []
        if self._held and event != self._event:
            rows.append(self._release_all())
        buf = self._held + text if self._held else text
        cut = safe_cut(buf, self._awkward_secrets())
        if len(buf) - cut > MAX_HOLD_CHARS:
            cut = len(buf) - KEEP_CHARS
        self._held = buf[cut:]
        self._event = event
        if cut:
            rows.append((event, self._release(buf[:cut])))
        return rows

    def flush(self) -> tuple[str, str] | None:
        """Everything held, redacted, as one row (None if nothing is held): at any other event, the
        terminal row, a cancel."""
        return self._release_all() if self._held else None

    def drop(self) -> None:
        """Forget what is held (its row was refused, so it will never be shown)."""
        self._held = ""
        self._before = ""

    def _release_all(self) -> tuple[str, str]:
        assert self._event is not None
        text, self._held = self._held, ""
        row = self._event, self._release(text)
        self._before = ""  # a flush point ends the piece: what follows is not glued to it
        return row

    def _release(self, text: str) -> str:
        before = self._before
        self._before = "" if text[-1].isspace() else text[-1]
        if not before:
            return self._redactor.text(text)
        clean = self._redactor.text(before + text)
        return clean[len(before):] if clean.startswith(before) else self._redactor.text(text)

    def _awkward_secrets(self) -> tuple[str, ...]:
        """Known secrets a held word would not cover (they contain spaces or non-ASCII characters)."""
        current: object = getattr(self._redactor, "current", self._redactor)
        if current is not self._awkward_of:
            known: frozenset[str] = getattr(current, "known", frozenset())
            self._awkward = tuple(s for s in known if not _plain_ascii(s))
            self._awkward_of = current
        return self._awkward


def safe_cut(buf: str, awkward: tuple[str, ...] = ()) -> int:
    """The length of `buf`'s head no secret can straddle into what follows; the rest is held."""
    n = len(buf)
    if not n:
        return 0
    if buf[-1].isspace():
        run_start = cut = n
    else:
        run_start = n - len(buf.rsplit(None, 1)[-1])
        cut = run_start if "://" in buf[run_start:] else _ascii_tail_start(buf, run_start)
    for _ in range(_MAX_CHAIN):  # each move may uncover a name or a secret that straddles the new cut
        window = max(0, min(run_start, cut) - _CONTEXT_CHARS)
        moved = cut
        if _GATE.search(buf, window):  # near a secret name a non-ASCII word is held whole
            moved = _named_cut(buf, window, run_start, min(cut, run_start) if run_start < len(buf) else cut)
        for secret in awkward:
            start = _secret_start(buf, secret, moved)
            if start < moved:
                moved = _word_start(buf, start)
        if moved == cut:
            return cut
        cut = moved
    return 0  # names and secrets chained further back than we follow: hold it all until the flush


def _ascii_tail_start(buf: str, run_start: int) -> int:
    """Where the trailing run's last stretch of printable ASCII begins (a word of ASCII text: the run).

    A run with `:` or `=` in it is held whole: an assignment's value may hold non-ASCII characters."""
    run = buf[run_start:]
    if run.isascii() or "=" in run or ":" in run:
        return run_start
    i = len(buf)
    while i > run_start and "!" <= buf[i - 1] <= "~":
        i -= 1
    return i


def _named_cut(buf: str, window: int, run_start: int, cut: int) -> int:
    """`cut`, moved back to hold an open `name = value` or a `Bearer ` waiting for its value.

    When the whole current word is held, only a name before it can matter (its value is the word),
    so a long word is never scanned. Otherwise (text ending in a space, or a non-ASCII word of which
    only the ASCII tail is held) an assignment is looked for up to the end. A name found before the
    cut holds from its word on; that word may itself be a value of an earlier name, hence the loop.
    """
    if not cut == run_start < len(buf):
        match = _OPEN_ASSIGNMENT.search(buf, window)
        if match is not None:
            cut = min(cut, _word_start(buf, match.start()))
    for _ in range(_MAX_CHAIN):
        match = (_NAME_BEFORE.search(buf, max(0, cut - _CONTEXT_CHARS), cut)
                 or _OPEN_AUTH.search(buf, max(0, cut - 8), cut))
        start = _word_start(buf, match.start()) if match is not None else cut
        if start >= cut:
            break
        cut = start
    return cut


def _word_start(buf: str, pos: int) -> int:
    """The start of the run of non-space characters that contains `pos`."""
    while pos > 0 and not buf[pos - 1].isspace():
        pos -= 1
    return pos


def _secret_start(buf: str, secret: str, cut: int) -> int:
    """`cut`, moved back before an occurrence of `secret` (whole, or begun at the end of `buf`) that it would split."""
    i = buf.find(secret[0], max(0, cut - len(secret) + 1), cut)
    while i != -1:
        if buf.startswith(secret, i) or secret.startswith(buf[i:]):
            return i
        i = buf.find(secret[0], i + 1, cut)
    return cut


def _plain_ascii(text: str) -> bool:
    return text.isascii() and not any(c.isspace() for c in text)
