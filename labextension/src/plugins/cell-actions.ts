/**
 * Explain and Fix on notebook cells: in the cell toolbar (declared in
 * schema/cell-actions.json, `jupyter.lab.toolbars` → `Cell`) and in the cell's
 * context menu. Explain is offered on any code cell, Fix on a cell showing an
 * error. Both, like "Ask Hermes" under an error, send the cell (and its
 * traceback) to that notebook's session (docs/sidebar.md).
 */
import { JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { Cell, CodeCell } from '@jupyterlab/cells';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';

import type { INotebookRef } from '../model/active-notebook';
import { CellAction, IOutputLike, cellTurn, errorText, isHermesCell } from '../model/cell-turn';
import { IHermesChat } from '../tokens';
import { cellAttachment } from './notebook-context';

export namespace CellCommandIDs {
  export const explain = 'hermes-jupyter:explain-cell';
  export const fix = 'hermes-jupyter:fix-cell';
}

/** The notebook a panel shows, as the sessions know it (its path and kernel now). */
export function notebookRefOf(panel: NotebookPanel): INotebookRef {
  const path = panel.context.path;
  return { path, name: path.split('/').pop() || path, kernelId: panel.sessionContext.session?.kernel?.id ?? null };
}

/** A code cell's outputs as JSON (none for other cells). */
export function outputsOf(cell: Cell): IOutputLike[] {
  if (!(cell instanceof CodeCell)) {
    return [];
  }
  const outputs = cell.model.outputs;
  const list: IOutputLike[] = [];
  for (let i = 0; i < outputs.length; i++) {
    list.push(outputs.get(i).toJSON() as IOutputLike);
  }
  return list;
}

/** Whether `action` applies to a cell: a code cell not talking to Hermes itself; Ask and Fix need an error. */
export function offers(action: CellAction, cell: Cell | null): cell is CodeCell {
  if (!(cell instanceof CodeCell) || isHermesCell(cell.model.sharedModel.getSource())) {
    return false;
  }
  return action === 'explain' || errorText(outputsOf(cell)) !== null;
}

/** Send `action` about `cell` to its notebook's session; false when nothing was sent. */
export async function askAboutCell(hermes: IHermesChat, panel: NotebookPanel, cell: Cell, action: CellAction): Promise<boolean> {
  const turn = offers(action, cell) ? cellTurn(action, cellAttachment(panel, cell), outputsOf(cell)) : null;
  return turn ? hermes.askInNotebook(notebookRefOf(panel), turn) : false;
}

export const cellActionsPlugin: JupyterFrontEndPlugin<void> = {
  id: 'hermes-jupyter:cell-actions',
  description: 'Explain and Fix in the cell toolbar and the cell context menu.',
  autoStart: true,
  requires: [IHermesChat, INotebookTracker],
  activate: (app: JupyterFrontEnd, hermes: IHermesChat, tracker: INotebookTracker) => {
    const command = (action: CellAction, label: string, caption: string) => ({
      label,
      caption,
      isVisible: () => offers(action, tracker.activeCell),
      execute: async () => {
        const panel = tracker.currentWidget;
        const cell = tracker.activeCell;
        return panel && cell ? askAboutCell(hermes, panel, cell, action) : false;
      }
    });
    app.commands.addCommand(
      CellCommandIDs.explain,
      command('explain', 'Explain with Hermes', 'Ask Hermes to explain this cell (its source is attached)')
    );
    app.commands.addCommand(
      CellCommandIDs.fix,
      command('fix', 'Fix with Hermes', 'Ask Hermes to fix this cell (its source and its error are attached)')
    );
    app.contextMenu.addItem({ type: 'separator', selector: '.jp-Notebook .jp-Cell', rank: 20 });
    app.contextMenu.addItem({ command: CellCommandIDs.explain, selector: '.jp-Notebook .jp-Cell', rank: 20 });
    app.contextMenu.addItem({ command: CellCommandIDs.fix, selector: '.jp-Notebook .jp-Cell', rank: 20 });
    followActiveCell(app, tracker);
  }
};

/** The toolbar shows Fix only while the active cell shows an error: say so when that changes. */
function followActiveCell(app: JupyterFrontEnd, tracker: INotebookTracker): void {
  let watched: CodeCell | null = null;
  const changed = () => app.commands.notifyCommandChanged(CellCommandIDs.fix);
  tracker.activeCellChanged.connect((_, cell) => {
    if (watched && !watched.isDisposed) {
      // A removed cell's model lets go of its outputs before the widget is disposed.
      watched.model?.outputs?.changed.disconnect(changed);
    }
    watched = cell instanceof CodeCell ? cell : null;
    watched?.model.outputs.changed.connect(changed);
    changed();
  });
}
