/**
 * "Ask Hermes" under the error output of an ordinary code cell: one click sends
 * the cell's source and its traceback to that notebook's session (cell-actions.ts
 * builds and sends it, as for Explain and Fix). Cells that talk to Hermes
 * themselves (`%%hermes`, `%hermes`) get no button.
 */
import { JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { Cell, CodeCell } from '@jupyterlab/cells';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { PanelLayout, Widget } from '@lumino/widgets';

import { IHermesChat } from '../tokens';
import { askAboutCell, offers } from './cell-actions';

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
      // A reopened notebook's cells are placeholders until first drawn: their input and output
      // areas are laid out then, so the button waits for that (else it lands above the input).
      void cell.ready.then(() => !cell.isDisposed && sync());
    }
  };
  panel.content.model?.cells.changed.connect(() => requestAnimationFrame(update));
  update();
}

/** A button while the cell shows an error (and is not a Hermes cell), none otherwise. */
function syncButton(hermes: IHermesChat, panel: NotebookPanel, cell: CodeCell, shown: Map<Cell, Widget>): void {
  const have = shown.get(cell);
  if (!offers('ask', cell)) {
    have?.dispose();
    shown.delete(cell);
    return;
  }
  if ((have && !have.isDisposed) || cell.isPlaceholder()) {
    return;
  }
  const widget = new Widget();
  widget.addClass('jp-HermesAskError');
  const button = document.createElement('button');
  button.className = 'jp-Button jp-mod-styled jp-HermesAskError-button';
  button.dataset.testid = 'hermes-ask-error';
  button.textContent = 'Ask Hermes';
  button.title = 'Ask Hermes about this error (the cell and its traceback go to this notebook\'s session)';
  button.onclick = () => void askAboutCell(hermes, panel, cell, 'ask');
  widget.node.appendChild(button);
  placeAfterOutput(cell, widget);
  shown.set(cell, widget);
}

/** Right under the cell's output area (before its footer), whatever else the cell's layout holds. */
function placeAfterOutput(cell: CodeCell, widget: Widget): void {
  const layout = cell.layout as PanelLayout;
  const output = layout.widgets.findIndex(child => child.hasClass('jp-Cell-outputWrapper'));
  if (output === -1) {
    layout.addWidget(widget);
  } else {
    layout.insertWidget(output + 1, widget);
  }
}
