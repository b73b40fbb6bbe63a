"""Images in tool results (plots a cell drew): described in the text every model reads, and sent as image
parts to a model that takes them (docs/autonomy.md, "Outputs the agent reads").

A tool result is text; the `openai` backend adds the images of the last results as a user message
of `image_url` parts right after the tool messages, only for this turn's requests (they are not
kept in the conversation). Hermes and text-only models get the one-line description alone.
"""

from __future__ import annotations

import base64
import binascii
import re
import struct
from collections.abc import Iterable
from typing import Any, Final

#: Image types sent to a model (what OpenAI-compatible vision endpoints take).
SENT_TYPES: Final = ("image/png", "image/jpeg", "image/gif", "image/webp")
#: Most images sent after one round of tool calls, and most base64 characters of one.
MAX_IMAGES: Final = 4
MAX_IMAGE_CHARS: Final = 2_000_000
#: Model names that read images, when `OpenAIAgent.send_images` is `auto` (a name heuristic: a model
#: not listed gets descriptions only; set send_images to `always` or `never` to decide it yourself).
VISION_MODEL_RE: Final = re.compile(
    r"gpt-4o|gpt-4\.1|gpt-4-turbo|gpt-5|\bo[134]\b|claude|gemini|pixtral|llava|vision|[-_]vl\b|[-_]vl[-_]"
    r"|qwen2\.5-vl|llama-4|gemma-3|minicpm-v|moondream",
    re.IGNORECASE,
)


def takes_images(model: str, setting: str) -> bool:
    """Whether to send image parts to `model`: `always`, `never`, or `auto` (by its name)."""
    if setting in ("always", "never"):
        return setting == "always"
    return bool(VISION_MODEL_RE.search(model or ""))


def describe_image(mime: str, data: Any) -> str:
    """`image/png 640×480` (the size read from the image's header when it can be), for the text of a result."""
    size = _png_size(data) if mime == "image/png" else None
    return f"{mime} {size[0]}×{size[1]}" if size else mime


def _png_size(data: Any) -> tuple[int, int] | None:
    if not isinstance(data, str):
        return None
    try:
        head = base64.b64decode(data[:48].strip() + "=" * (-len(data[:48].strip()) % 4))
    except (binascii.Error, ValueError):
        return None
    if len(head) < 24 or head[:8] != b"\x89PNG\r\n\x1a\n":
        return None
    width, height = struct.unpack(">II", head[16:24])
    return width, height


class ImageParts:
    """The images of the last tool result(s), as data URLs, bounded."""

    def __init__(self) -> None:
        self.urls: list[str] = []

    def clear(self) -> None:
        self.urls = []

    def take(self, outputs: Iterable[dict[str, Any]]) -> None:
        for output in outputs:
            data = output.get("data") if isinstance(output, dict) else None
            for mime in SENT_TYPES:
                value = data.get(mime) if isinstance(data, dict) else None
                if isinstance(value, list):
                    value = "".join(str(v) for v in value)
                if isinstance(value, str) and len(self.urls) < MAX_IMAGES and len(value) <= MAX_IMAGE_CHARS:
                    self.urls.append(f"data:{mime};base64,{''.join(value.split())}")
                    break


def image_message(urls: list[str]) -> dict[str, Any]:
    """The user message carrying the images of the tool results just before it."""
    noun = "image" if len(urls) == 1 else f"{len(urls)} images"
    parts: list[dict[str, Any]] = [{"type": "text", "text": f"The {noun} in the tool results above, in order."}]
    parts += [{"type": "image_url", "image_url": {"url": url}} for url in urls]
    return {"role": "user", "content": parts}
