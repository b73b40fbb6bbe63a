"""Hermes Agent as a hermes-jupyter backend, out of process (never imported into the server)."""

from ..approvals import ApprovalRequest
from .backend import HermesAgent
from .process import scrubbed_env

__all__ = ["ApprovalRequest", "HermesAgent", "scrubbed_env"]
