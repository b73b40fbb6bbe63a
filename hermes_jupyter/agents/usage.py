"""A turn's token usage as the `usage` event (docs/journal.md), whichever backend counted it.

Backends report usage in their provider's words (`prompt_tokens`, Hermes' `input_tokens`,
`cache_read_tokens`, `estimated_cost_usd`, …); this is the one place that reads them.
"""

from __future__ import annotations

from typing import Any


def _number(usage: dict[str, Any], *names: str) -> int | float | None:
    for name in names:
        value = usage.get(name)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return value
    return None


def usage_payload(usage: dict[str, Any], *, duration_s: float, model: str | None) -> dict[str, Any]:
    """`{input_tokens, output_tokens, cached_tokens, cost_usd, duration_s, model}`; unknown counts are null;
    `our_count: true` when the backend counted them itself (`usage["our_count"]`), not a provider.

    Counts the provider did not report are null, never 0 (docs/transcript.md): a request always
    sends the model some input, so "0 in, 0 out" (Hermes' counters when the server sent no usage)
    is read as not reported too. A cost of 0 is kept only when tokens were reported with it.
    """
    cost = _number(usage, "cost_usd", "estimated_cost_usd")
    cached = _number(usage, "cached_tokens", "cache_read_tokens")
    reported = usage.get("model")
    tokens_in = _number(usage, "input_tokens", "prompt_tokens")
    tokens_out = _number(usage, "output_tokens", "completion_tokens")
    if not tokens_in and not tokens_out:
        tokens_in = tokens_out = cached = None
        cost = cost or None
    payload: dict[str, Any] = {
        "input_tokens": int(tokens_in) if tokens_in is not None else None,
        "output_tokens": int(tokens_out) if tokens_out is not None else None,
        "cached_tokens": int(cached) if cached is not None else None,
        "cost_usd": float(cost) if cost is not None else None,
        "duration_s": round(duration_s, 3),
        "model": str(reported) if reported else model,
    }
    if usage.get("our_count") is True and (tokens_in is not None or tokens_out is not None):
        payload["our_count"] = True
    return payload
