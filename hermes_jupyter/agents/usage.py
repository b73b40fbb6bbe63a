"""A turn's token usage as the `usage` event (CONTRACT §9), whichever backend counted it.

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
    """`{input_tokens, output_tokens, cached_tokens, cost_usd, duration_s, model}`; unknown counts are null."""
    cost = _number(usage, "cost_usd", "estimated_cost_usd")
    cached = _number(usage, "cached_tokens", "cache_read_tokens")
    reported = usage.get("model")
    return {
        "input_tokens": int(_number(usage, "input_tokens", "prompt_tokens") or 0),
        "output_tokens": int(_number(usage, "output_tokens", "completion_tokens") or 0),
        "cached_tokens": int(cached) if cached is not None else None,
        "cost_usd": float(cost) if cost is not None else None,
        "duration_s": round(duration_s, 3),
        "model": str(reported) if reported else model,
    }
