"""The seam between a model-driven backend and the tools it may call.

A backend that runs its own tool loop (the `openai` backend) asks a registry for
the schemas to advertise and calls tools through it; approvals, confinement and
the notebook binding live behind the registry, never in the backend.
"""

from __future__ import annotations

from typing import Any, Callable, Protocol, runtime_checkable

from .base import EventSink, TurnRequest


@runtime_checkable
class ToolRegistry(Protocol):
    """Tools offered to the model for one turn."""

    def schemas(self) -> list[dict[str, Any]]:
        """OpenAI `tools` entries: `{"type": "function", "function": {name, description, parameters}}`."""
        ...

    async def call(self, name: str, args: dict[str, Any]) -> tuple[str, bool]:
        """Run one tool; return `(result_text, is_error)`.

        An unknown tool or refused approval is a result with `is_error=True`, not
        an exception: the model reads the text and may try something else.
        """
        ...


#: Builds the registry of one turn, so it can hold that turn's sink (for approval
#: events) and notebook binding. Returning None offers the model no tools.
ToolsFactory = Callable[[TurnRequest, EventSink], "ToolRegistry | None"]


async def call_tool(
    registry: ToolRegistry | None, name: str, args: dict[str, Any], tool_call_id: str | None = None,
) -> tuple[str, bool]:
    """One call as every backend makes it: a registry's bug (or no registry) is the model's tool error.

    `tool_call_id` (the model's id of the call) reaches a registry that records it (`takes_call_ids`):
    the notebook tools put it in a changed cell's provenance."""
    if registry is None:
        return f"Unknown tool {name!r}.", True
    try:
        if tool_call_id is not None and getattr(registry, "takes_call_ids", False):
            return await registry.call(name, args, tool_call_id)  # type: ignore[call-arg]
        return await registry.call(name, args)
    except Exception as exc:  # noqa: BLE001 - a registry is plugged in; its bug is the model's tool error
        return f"The tool failed: {type(exc).__name__}: {exc}", True


def tool_image_urls(registry: ToolRegistry | None) -> list[str]:
    """The images (data URLs) the registry's last result showed, for a model that reads images (tool_images.py)."""
    images = getattr(registry, "images", None)
    urls = getattr(images, "urls", None)
    return list(urls) if isinstance(urls, list) else []
