/**
 * The edits Hermes makes to an open notebook on the user's click (an accepted
 * proposal): insert a cell, replace a cell's source, or delete a cell. All go through the notebook's
 * shared model (so they reach collaborators and the undo history) and neither
 * executes anything: an inserted code cell has no outputs and no execution count.
 */
import type { NotebookPanel } from '@jupyterlab/notebook';

export type CellKind = 'code' | 'markdown';

/** Insert a cell at `index` (clamped to the notebook) and make it the active cell; its index. */
export function insertCell(panel: NotebookPanel, index: number, cellType: CellKind, source: string): number {
  const model = panel.content.model;
  if (!model) {
    throw new Error('The notebook is still loading. Try again in a moment.');
  }
  const at = Math.max(0, Math.min(index, model.sharedModel.cells.length));
  model.sharedModel.insertCell(at, { cell_type: cellType, source, metadata: {} });
  panel.content.activeCellIndex = at;
  return at;
}

/** Replace the source of the cell with this id; false when the notebook has no such cell. */
export function replaceSource(panel: NotebookPanel, cellId: string, source: string): boolean {
  const index = cellIndex(panel, cellId);
  if (index < 0) {
    return false;
  }
  panel.content.model!.sharedModel.cells[index].setSource(source);
  panel.content.activeCellIndex = index;
  return true;
}

/** Delete the cell with this id (a proposed deletion the user accepted); false when there is no such cell. */
export function deleteCell(panel: NotebookPanel, cellId: string): boolean {
  const index = cellIndex(panel, cellId);
  if (index < 0) {
    return false;
  }
  panel.content.model!.sharedModel.deleteCell(index);
  return true;
}

/** The index of the cell with this id, or -1. */
export function cellIndex(panel: NotebookPanel, cellId: string): number {
  const cells = panel.content.model?.sharedModel.cells ?? [];
  return cells.findIndex(cell => cell.getId() === cellId);
}
