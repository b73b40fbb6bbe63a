"""What models a session of a backend can use (`GET models`): `{backend, default, models: [{id, label}], can_steer}`.

Each backend answers for itself through an optional `list_models()`; one without it offers
just its configured model. The answer is informational: a session's `model` is sent as is.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from .base import Steers


@runtime_checkable
class ListsModels(Protocol):
    async def list_models(self) -> tuple[str | None, list[dict[str, str]]]: ...


def model_entry(model_id: str, label: str | None = None) -> dict[str, str]:
    return {"id": model_id, "label": label or model_id}


async def describe_models(name: str, backend: Any) -> dict[str, Any]:
    """The `GET models` answer for one backend."""
    if isinstance(backend, ListsModels):
        default, models = await backend.list_models()
    else:
        configured = getattr(backend, "model", None)
        default = str(configured) if configured else None
        models = [model_entry(default)] if default else []
    return {"backend": name, "default": default, "models": models, "can_steer": isinstance(backend, Steers)}
