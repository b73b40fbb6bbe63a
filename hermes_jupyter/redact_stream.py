"""Redaction of streamed text: a secret split across deltas is masked as if it came whole.

A model writes a key in pieces (`sk-pro`, `j-abc1`, …); redacting each delta alone sees no key.
`StreamRedactor` keeps a carry-over per run: only the tail that could still become (part of) the
*secret part* of a match is held back, and journaled with the next delta or at a flush point (any
other event, the end of the run, a cancel). Everything else is released at once, so a viewer sees
each token when it comes, not one token late. Matching sees a look-behind context of text already
released (`CONTEXT_CHARS`), so a name released in one delta (`api_key=`, `Bearer `) still masks the
value that comes in the next. The joined released text equals the redaction of the joined text
(docs/journal.md, "Streamed text and redaction").

Held back (the secret parts, from where each could begin to the end): a tail that is a prefix of a
known secret (mid-word too: a known value is replaced wherever it stands); a word that is a prefix
of a provider key (`sk-`, `ghp_`, `hjk_`, `AKIA`, `eyJ`, `xox…`, `hf_`, `AIza`) at a word boundary;
the word after `Bearer ` / `token `; the open value of a `name=` / `"name": ` assignment; a word
containing `://`. A secret name itself (`api_key`, `Bearer`, `password = `) is released.
"""

from __future__ import annotations

import re
from typing import Final, Protocol

from .events import REASONING, TOKEN
from .redact import MASK, has_secret_word

#: Events whose `{text}` payloads are deltas of one stream of text.
TEXT_STREAMS: Final = frozenset({TOKEN, REASONING})

#: A held run longer than this (a blob without spaces) is released but for its last `KEEP_CHARS`,
#: so holding never copies more than a few KiB per delta. A secret longer than `KEEP_CHARS` inside
#: such a run could be cut; no key format comes close.
MAX_HOLD_CHARS: Final = 4096
KEEP_CHARS: Final = 512
#: Released text kept as look-behind for matching (names, `Bearer `, `://`, word boundaries).
CONTEXT_CHARS: Final = 256
#: How far before a value its secret name (and separator) is looked for.
_NAME_CHARS: Final = 96
#: How many times a cut (or the look-behind's start) may move back, each move uncovering another
#: secret or name before it (then all is held until the flush).
_MAX_CHAIN: Final = 8

_NAME: Final = (r"[A-Za-z0-9_.\-]*(?:api[_\-]?key|secret|token|passw(?:or)?d|passwd|credential|auth|cookie)"
                r"[A-Za-z0-9_.\-]*")
#: A secret name, its separator and a value that reaches the end (it may still grow): redact.py's
#: `_ASSIGNMENT` with the value open. Its `value` group is the secret part.
_OPEN_VALUE: Final = re.compile(rf"""(?ix) {_NAME} ["']?\s*[:=]\s*["']? (?P<value>[^\s"',;}}&]*)\Z""")
#: A secret name at the end of released text, its separator perhaps begun: the next value is masked
#: only if matching sees it, so the redaction of the next piece starts from its word.
_NAME_TAIL: Final = re.compile(rf"""(?ix) {_NAME} ["']?\s*(?:[:=]\s*["']?)?\Z""")
#: `Bearer ` / `token ` right before the current word (redact.py's look-behind): the word is their value.
_AUTH_BEFORE: Final = re.compile(r"(?i)\b(?:bearer|token) \Z")
#: A provider key begun at a word boundary and reaching the end (a prefix of one of redact.py's key
#: formats, or a whole one that may still grow).
_OPEN_KEY: Final = re.compile(r"""(?x)\b(?:
      [srp](?:k(?:-[A-Za-z0-9_\-]*)?)?
    | g(?:h(?:[pousr](?:_[A-Za-z0-9_]*)?)?)? | gi(?:t(?:h(?:u(?:b(?:_(?:p(?:a(?:t(?:_[A-Za-z0-9_]*)?)?)?)?)?)?)?)?)?
    | x(?:o(?:x(?:[abprs](?:-[A-Za-z0-9\-]*)?)?)?)?
    | A(?:K(?:I(?:A[0-9A-Z]*)?)?)? | A(?:I(?:z(?:a[0-9A-Za-z_\-]*)?)?)?
    | h(?:f(?:_[A-Za-z0-9]*)?)? | h(?:j(?:k(?:_[A-Za-z0-9_\-]*)?)?)?
    | e(?:y(?:J[A-Za-z0-9_\-.]*)?)?
    )\Z""")


class TextRedactor(Protocol):
    """What the stream needs of a redactor (`Redactor` or the run's `RunRedactor`)."""

    def text(self, text: str) -> str: ...


class StreamRedactor:
    """The carry-over of one run's text deltas. Not thread-safe: the sink calls it under its lock."""

    __slots__ = ("_redactor", "_event", "_held", "_context", "_secrets", "_secrets_of", "_secrets_near")

    def __init__(self, redactor: TextRedactor) -> None:
        self._redactor = redactor
        self._event: str | None = None
        self._held = ""
        #: The raw text released last (up to `CONTEXT_CHARS`): what matching looks behind at.
        self._context = ""
        self._secrets: tuple[str, ...] = ()
        self._secrets_of: object = None
        #: The known secrets that matter to the delta being fed (`_near`).
        self._secrets_near: tuple[str, ...] = ()

    @property
    def held(self) -> str:
        return self._held

    def feed(self, event: str, text: str) -> list[tuple[str, str]]:
        """The `(event, text)` rows to journal for one delta: the other stream's held text first (if
        the stream changed), then whatever of this one is safe to show. Often one row, sometimes none."""
        rows: list[tuple[str, str]] = []
        if event != self._event:
            if self._held:
                rows.append(self._release_all())
            self._context = ""  # another stream's text is not this one's look-behind
        context = self._context
        full = context + self._held + text
        start = len(context)
        secrets = _near(full, start, self._known())
        cut = hold_start(full, start, secrets)
        self._secrets_near = secrets
        if len(full) - cut > MAX_HOLD_CHARS:
            cut = len(full) - KEEP_CHARS
        self._held = full[cut:]
        self._event = event
        if cut > start:
            rows.append((event, self._release(full, start, cut)))
        return rows

    def flush(self) -> tuple[str, str] | None:
        """Everything held, redacted, as one row (None if nothing is held): at any other event, the
        terminal row, a cancel."""
        return self._release_all() if self._held else None

    def drop(self) -> None:
        """Forget what is held (its row was refused, so it will never be shown)."""
        self._held = ""
        self._context = ""

    def _release_all(self) -> tuple[str, str]:
        assert self._event is not None
        full = self._context + self._held
        self._secrets_near = _near(full, len(self._context), self._known())
        row = self._event, self._release(full, len(self._context), len(full))
        self._held = ""
        self._context = ""  # a flush point ends the piece: what follows is not glued to it
        return row

    def _release(self, full: str, start: int, cut: int) -> str:
        """`full[start:cut]` redacted as it stands after the released text before it."""
        self._context = full[max(0, cut - CONTEXT_CHARS):cut]
        piece = full[start:cut]
        if not start:
            return self._redactor.text(piece)
        before = full[look_behind_start(full, start, self._secrets_near):start]
        clean = self._redactor.text(before + piece)
        if clean.startswith(before):
            return clean[len(before):]
        shown = self._redactor.text(before)  # the look-behind held a secret, masked when it was released
        return clean[len(shown):] if clean.startswith(shown) else self._redactor.text(piece)

    def _known(self) -> tuple[str, ...]:
        """The known secrets of the redactor as it stands (a run's redactor learns more as it goes)."""
        current: object = getattr(self._redactor, "current", self._redactor)
        if current is not self._secrets_of:
            known: frozenset[str] = getattr(current, "known", frozenset())
            self._secrets = tuple(known)
            self._secrets_of = current
        return self._secrets


def _near(full: str, start: int, secrets: tuple[str, ...]) -> tuple[str, ...]:
    """The known secrets that can matter at the end of `full`: whole in it, or begun at its end
    (most deltas: none, and the per-secret scans are skipped)."""
    if not secrets:
        return secrets
    n, last, near = len(full), full[-1:], []
    for secret in secrets:
        if secret[0] == last or full.find(secret[:2], max(start, n - len(secret) + 1)) != -1 or secret in full:
            near.append(secret)
    return tuple(near)


def hold_start(full: str, start: int, secrets: tuple[str, ...] = ()) -> int:
    """Where the held tail of `full` begins (never before `start`: `full[:start]` is released context).

    The earliest place a secret part could begin and still be open at the end: a pattern's (looked
    for as redaction applies them, after whole known secrets are masked: `[redacted]sk-…` begins a
    key where `staplesk-…` does not, and a value runs on through a masked secret with spaces), or a
    known secret's. A cut must also leave nothing open before it (`AKIA…P|correct`, `password:中|correct`:
    what follows decides those matches), so each move is checked again as if the text ended there.
    """
    cut = len(full)
    for _ in range(_MAX_CHAIN):
        moved = _open_start(full if cut == len(full) else full[:cut], start, secrets) if cut > start else cut
        for secret in secrets:
            moved = _secret_start(full, secret, moved, max(start, moved - len(secret) + 1))
        if moved == cut:
            return cut
        cut = moved
    return start  # moves chained further back than we follow: hold it all until the flush


def _open_start(full: str, start: int, secrets: tuple[str, ...]) -> int:
    """Where a pattern match still open at the end of `full` begins (`len(full)` if none)."""
    n = len(full)
    if full[-1].isspace():
        return n
    view = MaskedView(full, secrets)
    text, vstart = view.text, view.to_view(start)
    word = len(text) - len(text.rsplit(None, 1)[-1])
    return max(start, view.to_full(_pattern_start(text, max(vstart, word), word)))  # released text stays released


class MaskedView:
    """`full` with its whole known secrets masked as `Redactor.text` masks them first (longest first,
    left to right), and the way back from a position in it to one in `full`."""

    __slots__ = ("text", "_spans")

    def __init__(self, full: str, secrets: tuple[str, ...]) -> None:
        self.text = full
        #: (start in full, end in full, start in the view) of each masked secret, in order.
        self._spans: list[tuple[int, int, int]] = []
        present = sorted((s for s in secrets if s in full), key=len, reverse=True)
        if not present:
            return
        taken: list[tuple[int, int]] = []
        for secret in present:
            i = full.find(secret)
            while i != -1:
                end = i + len(secret)
                if any(a < end and i < b for a, b in taken):
                    i = full.find(secret, i + 1)
                    continue
                taken.append((i, end))
                i = full.find(secret, end)
        pieces, at, shift = [], 0, 0
        for a, b in sorted(taken):
            pieces += [full[at:a], MASK]
            self._spans.append((a, b, a - shift))
            shift += (b - a) - len(MASK)
            at = b
        pieces.append(full[at:])
        self.text = "".join(pieces)

    def to_view(self, pos: int) -> int:
        shift = 0
        for a, b, v in self._spans:
            if pos <= a:
                break
            if pos < b:
                return v  # inside a masked secret (released in part: it was learned late)
            shift = b - (v + len(MASK))
        return pos - shift

    def to_full(self, pos: int) -> int:
        """A cut in the view, in `full` (inside a mask: before its secret)."""
        shift = 0
        for a, b, v in self._spans:
            if pos <= v:
                break
            if pos < v + len(MASK):
                return a
            shift = b - (v + len(MASK))
        return pos + shift


def _pattern_start(full: str, lo: int, word: int) -> int:
    """The start of an open key, auth value, URL or assignment value in the current word (else `len(full)`).

    `lo` is where the current word's unreleased part begins, `word` where the word begins."""
    n = len(full)
    if "://" in full[word:] or _AUTH_BEFORE.search(full, max(0, word - 8), word):
        return lo
    cut = n
    key = _OPEN_KEY.search(full, lo)
    if key is not None:
        cut = key.start()
    window = max(0, word - _NAME_CHARS)  # the name may begin the word (`api_key…=value`)
    if _named_near(full, window, len(full)):
        value = _OPEN_VALUE.search(full, window)
        if value is not None and value.start("value") < n:
            cut = min(cut, max(lo, value.start("value")))
    return cut


def look_behind_start(full: str, start: int, secrets: tuple[str, ...] = ()) -> int:
    """Where the released context the next piece is redacted with begins.

    The last 8 characters (`\\b`, `Bearer `, `://`) and the printable ASCII run they end in (a name
    being typed), one more character (so a word boundary at its start is what it is in the whole
    text). Near a secret name it begins at a word no name and separator, nor `Bearer `, precede: a
    name there may be the value of an earlier one (`password = x_password = y`, `Bearer x_api_key`),
    and only the parse from such a word is the parse of the whole text. A known secret it would cut
    is taken whole: in the whole text the patterns see it masked (`[redacted]sk-…` has a word
    boundary that `staplesk-…` has not)."""
    begin = max(0, start - 8)
    while begin > 0 and "!" <= full[begin - 1] <= "~":
        begin -= 1
    begin = max(0, begin - 1)
    window = max(0, start - _NAME_CHARS)
    named = _named_near(full, window, len(full))
    for _ in range(_MAX_CHAIN):
        moved = begin
        if named:
            moved = _word_start(full, moved)
            name = _NAME_TAIL.search(full, max(0, moved - _NAME_CHARS), moved)
            if name is not None and name.start() < moved:
                moved = _word_start(full, name.start())
        auth = _AUTH_BEFORE.search(full, max(0, moved - 8), moved)
        if auth is not None:  # a value of `Bearer ` is masked before any name in it is looked for
            moved = _word_start(full, auth.start())
        for secret in secrets:
            i = full.find(secret, max(0, moved - len(secret) + 1), moved + len(secret))
            moved = moved if i == -1 else min(moved, i)
        if moved == begin:
            break
        begin = moved
    return begin


def _named_near(full: str, lo: int, hi: int) -> bool:
    """Whether a secret name with its `:` or `=` may be in `full[lo:hi]` (else the costly name
    patterns are skipped)."""
    if full.find("=", lo, hi) == -1 and full.find(":", lo, hi) == -1:
        return False
    return has_secret_word(full[lo:hi])


def _word_start(buf: str, pos: int) -> int:
    """The start of the run of non-space characters that contains `pos`."""
    while pos > 0 and not buf[pos - 1].isspace():
        pos -= 1
    return pos


def _secret_start(buf: str, secret: str, cut: int, lo: int) -> int:
    """`cut`, moved back before an occurrence of `secret` that begins in `[lo, cut)`: whole (so it
    straddles `cut`), or begun at the end of `buf`.

    A secret begun at the end is held from the start of its word (not before `lo`): `40 4|1…` would
    otherwise journal half a word, and a partial answer recovered after a crash would end in it
    (`… 40 4`, where the count was at 41)."""
    size = len(secret)
    whole = buf.find(secret, lo, cut + size - 1)
    end = whole if whole != -1 else cut
    i = buf.find(secret[:2], max(lo, len(buf) - size + 1), end)  # a prefix at the end: its first two characters
    while i != -1:
        if secret.startswith(buf[i:]):
            return max(lo, _word_start(buf, i))
        i = buf.find(secret[:2], i + 1, end)
    if whole == -1 and lo <= len(buf) - 1 < cut and buf[-1] == secret[0]:
        return max(lo, _word_start(buf, len(buf) - 1))  # the last character alone
    return end
