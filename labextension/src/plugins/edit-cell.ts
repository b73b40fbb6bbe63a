/**
 * Edit this cell (docs/editor.md): Accel K in a notebook cell asks "How should this cell
 * change?"; the answer goes, with the cell attached, as a turn to the notebook's own session,
 * whose agent proposes a replacement of the cell. The proposal arrives as the usual
 * replace-proposal diff beside the cell, with Accept and Reject (docs/proposals.md): nothing
 * changes without a click.
 */
import { JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { ICommandPalette, InputDialog, showErrorMessage } from '@jupyterlab/apputils';
import type { Cell } from '@jupyterlab/cells';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';

import type { IAttachment } from '../api/contract';
import { IHermesChat } from '../tokens';
import { cellAttachment } from './notebook-context';

export const EDIT_CELL_COMMAND = 'hermes-jupyter:edit-cell';

/**
 * What the turn says. Its first line is the instruction (it titles a new session); the offline demo
 * reads that line and the cell id (agents/demo_edit.py); the rest tells a model which tool to call.
 * The cell's source travels as the attachment.
 */
export function editRequest(cellId: string, instruction: string): string {
  return (
    `Edit this cell: ${instruction.trim()}\n\n` +
    `The cell is attached. Answer by calling propose_cell with action "replace", cell_id "${cellId}" and the ` +
    'complete new source of the cell. Change only what was asked; the user accepts or rejects it.'
  );
}

export const editCellPlugin: JupyterFrontEndPlugin<void> = {
  id: 'hermes-jupyter:edit-cell',
  description: 'Edit this cell: ask Hermes for a new source of the active cell, shown as a proposal beside it.',
  autoStart: true,
  requires: [IHermesChat, INotebookTracker],
  optional: [ICommandPalette],
  activate: (app: JupyterFrontEnd, hermes: IHermesChat, tracker: INotebookTracker, palette: ICommandPalette | null) => {
    app.commands.addCommand(EDIT_CELL_COMMAND, {
      label: 'Edit This Cell with Hermes…',
      caption: 'Say how the active cell should change; Hermes proposes a new source beside it (Accept or Reject)',
      isEnabled: () => !!tracker.currentWidget && !!tracker.activeCell,
      execute: async () => {
        const panel = tracker.currentWidget;
        const cell = tracker.activeCell;
        if (panel && cell) {
          await editCell(hermes, panel, cell);
        }
      }
    });
    palette?.addItem({ command: EDIT_CELL_COMMAND, category: 'Hermes' });
  }
};

async function editCell(hermes: IHermesChat, panel: NotebookPanel, cell: Cell): Promise<void> {
  const asked = await InputDialog.getText({
    title: 'Edit this cell with Hermes',
    label: 'How should this cell change?',
    placeholder: 'e.g. add type hints and a docstring',
    okLabel: 'Propose'
  });
  const instruction = asked.button.accept ? (asked.value ?? '').trim() : '';
  if (!instruction) {
    cell.editor?.focus();
    return;
  }
  try {
    // A model reads the saved notebook to check the cell it replaces: a new cell must be on disk.
    if (panel.context.model.dirty && !panel.context.model.readOnly) {
      await panel.context.save();
    }
  } catch (error) {
    void showErrorMessage('The notebook could not be saved', String(error));
    return;
  }
  const attachment: IAttachment = cellAttachment(panel, cell);
  const notebook = { path: panel.context.path, name: panel.context.path.split('/').pop() ?? panel.context.path,
    kernelId: panel.sessionContext.session?.kernel?.id ?? null };
  await hermes.askInNotebook(notebook, { message: editRequest(cell.model.id, instruction), attachments: [attachment] });
  cell.editor?.focus();
}
