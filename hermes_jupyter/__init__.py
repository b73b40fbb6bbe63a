"""hermes-jupyter: Hermes Agent sessions hosted by the Jupyter server.

Importing the package stays cheap: the server extension, the IPython
extension and the labextension paths are loaded lazily from their entry points.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"
