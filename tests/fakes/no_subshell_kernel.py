"""An IPython kernel without kernel subshells (as before ipykernel 7), for tests of the busy-kernel paths.

Launch as `python no_subshell_kernel.py -f CONNECTION_FILE`; `kernel_spec(dir)` writes a kernelspec for it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from ipykernel.kernelapp import IPKernelApp

NAME = "python3-no-subshells"


class NoSubshellKernelApp(IPKernelApp):
    """ipykernel 7 without its shell channel thread: the kernel then reports and offers no subshells."""

    def init_sockets(self) -> None:
        super().init_sockets()  # type: ignore[no-untyped-call]
        self.shell_channel_thread = None


def kernel_spec(kernels_dir: Path) -> str:
    """Write this kernel's spec under `kernels_dir` (a KernelSpecManager's kernel_dirs entry); its name."""
    spec = kernels_dir / NAME
    spec.mkdir(parents=True, exist_ok=True)
    argv = [sys.executable, str(Path(__file__).resolve()), "-f", "{connection_file}"]
    (spec / "kernel.json").write_text(json.dumps({"argv": argv, "display_name": "Python 3 (no subshells)",
                                                  "language": "python"}))
    return NAME


if __name__ == "__main__":
    NoSubshellKernelApp.launch_instance()
