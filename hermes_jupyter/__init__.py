"""hermes-jupyter: Hermes Agent sessions hosted by the Jupyter server.

Importing the package stays cheap: the server extension, the IPython
extension and the labextension are loaded lazily from their entry points.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"


def _jupyter_server_extension_points() -> list[dict[str, Any]]:
    from .server.app import HermesJupyter

    return [{"module": "hermes_jupyter", "app": HermesJupyter}]


def _jupyter_labextension_paths() -> list[dict[str, str]]:
    return [{"src": "labextension", "dest": "hermes-jupyter"}]


def load_ipython_extension(ipython: Any) -> None:
    """`%load_ext hermes_jupyter`: registers the `%hermes` / `%%hermes` magics."""
    from .kernel.magic import load_ipython_extension as load

    load(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    from .kernel.magic import unload_ipython_extension as unload

    unload(ipython)
