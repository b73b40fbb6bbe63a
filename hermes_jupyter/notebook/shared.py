"""Hermes outputs inside a collaboration room's shared document (jupyter-collaboration).

While a room holds a notebook, its shared document *is* the notebook: the room saves it
to disk, and takes the file back when the file changes under it, so a file write would
throw away what collaborators typed meanwhile. Recovery therefore edits the shared
document, the way JupyterLab itself replaces an output (delete it and insert the new one
at its place, in one transaction): every browser shows the result and the room's next save
keeps it. Browsers only observe the outputs list, not edits inside an output, so the
replacement is whole.

Reading and writing are split so the journal reads can run off the event loop: `unfinished`
reads what to rebuild, `replace_by_run` writes by run id, re-checking each output, so a
cell moved or an output finished meanwhile is never written twice.
"""

from __future__ import annotations

from typing import Any, Iterator

from .outputs import FINAL_STATUSES, MimeBundle, run_ref_of


def _outputs(ynotebook: Any) -> Iterator[tuple[Any, int, dict[str, Any]]]:
    """(outputs array, index, output as plain data) of every code cell output."""
    for ycell in ynotebook.ycells:
        if ycell.get("cell_type") != "code":
            continue
        outputs = ycell.get("outputs")
        if outputs is None:
            continue
        for index in range(len(outputs)):
            item = outputs[index]
            value = item.to_py() if hasattr(item, "to_py") else item
            if isinstance(value, dict):
                yield outputs, index, value


def _unfinished_run(output: dict[str, Any]) -> str | None:
    ref = run_ref_of(output)
    return ref["run_id"] if ref is not None and ref["status"] not in FINAL_STATUSES else None


def unfinished(ynotebook: Any) -> list[dict[str, Any]]:
    """Copies of the hermes outputs whose run status is not final (what `recovered_bundle` takes)."""
    return [output for _, _, output in _outputs(ynotebook) if _unfinished_run(output) is not None]


def replace_by_run(ynotebook: Any, bundles: dict[str, MimeBundle]) -> int:
    """Replace each still-unfinished output of a run in `bundles` with its bundle; returns cells changed.

    Idempotent by run id: an output already final (written by the kernel, another browser's
    request or an earlier call) is left alone.
    """
    from pycrdt import Map

    cells: set[int] = set()
    with ynotebook.ydoc.transaction():
        for outputs, index, output in list(_outputs(ynotebook)):
            run_id = _unfinished_run(output)
            if run_id is None or run_id not in bundles:
                continue
            fresh = {
                "output_type": output.get("output_type") or "display_data",
                "data": dict(bundles[run_id]),
                "metadata": output.get("metadata") or {},
            }
            if fresh["output_type"] == "execute_result":
                fresh["execution_count"] = output.get("execution_count")
            del outputs[index]
            outputs.insert(index, Map(fresh))
            cells.add(id(outputs))
    return len(cells)
