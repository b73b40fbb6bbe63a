"""The agent backends, in one table: a name, and a factory with one signature (docs/extending.md).

Each factory takes the same `BackendContext` (the configurable parent, the approval
broker, the notebook tools) and returns an `AgentBackend`; the server builds the
allowed ones from this table and nothing else names a backend class.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Final

from .approvals import ApprovalBroker
from .base import AgentBackend
from .clarify import ClarifyBroker
from .tools_registry import ToolsFactory


@dataclass(frozen=True)
class BackendContext:
    """What every backend factory gets: its traitlets parent, the approval and clarify brokers, the notebook tools."""

    parent: Any
    approvals: ApprovalBroker
    clarify: ClarifyBroker | None = None
    tools_factory: ToolsFactory | None = None


BackendFactory = Callable[[BackendContext], AgentBackend]


def _demo(ctx: BackendContext) -> AgentBackend:
    from .demo import DemoAgent

    agent = DemoAgent(parent=ctx.parent)
    agent.approvals, agent.clarify, agent.tools_factory = ctx.approvals, ctx.clarify, ctx.tools_factory
    return agent


def _openai(ctx: BackendContext) -> AgentBackend:
    from .openai import OpenAIAgent

    return OpenAIAgent(parent=ctx.parent, tools_factory=ctx.tools_factory)


def _hermes(ctx: BackendContext) -> AgentBackend:
    from .hermes.backend import HermesAgent

    agent = HermesAgent(parent=ctx.parent)
    agent.approval_handler = ctx.approvals.ask
    agent.tools_factory = ctx.tools_factory
    if ctx.clarify is not None:
        agent.clarify_handler = ctx.clarify.ask
    return agent


#: Name → factory. The first is the default backend of a new session.
BACKENDS: Final[dict[str, BackendFactory]] = {"demo": _demo, "openai": _openai, "hermes": _hermes}


def configurable_classes() -> list[type[Any]]:
    """The backends' traitlets classes (for `--help-all` and config files)."""
    from .demo import DemoAgent
    from .hermes.backend import HermesAgent
    from .openai import OpenAIAgent

    return [DemoAgent, OpenAIAgent, HermesAgent]
