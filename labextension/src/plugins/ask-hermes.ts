/**
 * "Ask Hermes" under the error output of an ordinary code cell: one click starts
 * a sidebar turn with the cell's source and its traceback attached. Cells that
 * talk to Hermes themselves (`%%hermes`, `%hermes`) get no button.
 */
import { JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { Cell, CodeCell } from '@jupyterlab/cells';
import type { IError } from '@jupyterlab/nbformat';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { PanelLayout, Widget } from '@lumino/widgets';

import { IHermesChat } from '../tokens';
import { cellAttachment, stripAnsi } from './notebook-context';

/** What the turn asks; the cell and its traceback travel as an attachment. */
export const ASK_ABOUT_ERROR = 'This cell failed. Explain the error and how to fix it.';

export const askHermesPlugin: JupyterFrontEndPlugin<void> = {
  id: 'hermes-jupyter:ask-hermes',
  description: 'An Ask Hermes button on error outputs.',
  autoStart: true,
  requires: [IHermesChat, INotebookTracker],
  activate: (_app: JupyterFrontEnd, hermes: IHermesChat, tracker: INotebookTracker) => {
    tracker.widgetAdded.connect((_, panel) => {
      void panel.context.ready.then(() => watchNotebook(hermes, panel));
    });
  }
};

function watchNotebook(hermes: IHermesChat, panel: NotebookPanel): void {
  const watched = new Set<Cell>();
  const shown = new Map<Cell, Widget>();
  const update = () => {
    for (const cell of panel.content.widgets) {
      if (!(cell instanceof CodeCell) || watched.has(cell)) {
        continue;
      }
      watched.add(cell);
      const sync = () => syncButton(hermes, panel, cell, shown);
      cell.model.outputs.changed.connect(sync);
      cell.disposed.connect(() => {
        watched.delete(cell);
        shown.delete(cell);
      });
      sync();
    }
  };
  panel.content.model?.cells.changed.connect(() => requestAnimationFrame(update));
  update();
}

/** A button while the cell shows an error (and is not a Hermes cell), none otherwise. */
function syncButton(hermes: IHermesChat, panel: NotebookPanel, cell: CodeCell, shown: Map<Cell, Widget>): void {
  const wanted = errorOf(cell) !== null && !/^\s*%%?hermes\b/.test(cell.model.sharedModel.getSource());
  const have = shown.get(cell);
  if (!wanted) {
    have?.dispose();
    shown.delete(cell);
    return;
  }
  if (have && !have.isDisposed) {
    return;
  }
  const widget = new Widget();
  widget.addClass('jp-HermesAskError');
  const button = document.createElement('button');
  button.className = 'jp-Button jp-mod-styled jp-HermesAskError-button';
  button.dataset.testid = 'hermes-ask-error';
  button.textContent = 'Ask Hermes';
  button.title = 'Ask Hermes about this error (the cell and its traceback are attached)';
  button.onclick = () => void ask(hermes, panel, cell);
  widget.node.appendChild(button);
  (cell.layout as PanelLayout).addWidget(widget);
  shown.set(cell, widget);
}

function errorOf(cell: CodeCell): IError | null {
  const outputs = cell.model.outputs;
  for (let i = 0; i < outputs.length; i++) {
    const output = outputs.get(i).toJSON();
    if (output.output_type === 'error') {
      return output as IError;
    }
  }
  return null;
}

async function ask(hermes: IHermesChat, panel: NotebookPanel, cell: CodeCell): Promise<void> {
  const error = errorOf(cell);
  if (!error) {
    return;
  }
  const traceback = stripAnsi((error.traceback ?? []).join('\n')) || `${error.ename}: ${error.evalue}`;
  hermes.chat.attachments.add(cellAttachment(panel, cell, traceback));
  hermes.show();
  await hermes.chat.send(ASK_ABOUT_ERROR);
}
