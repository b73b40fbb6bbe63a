/**
 * A badge above each cell Hermes created or changed in an open notebook (model/cell-badge.ts):
 * from the cell's `metadata.hermes`, "edited since" when its source no longer hashes to what
 * the agent left. Refreshed (debounced) when the notebook's content changes.
 */
import { JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import type { Cell } from '@jupyterlab/cells';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { PanelLayout, Widget } from '@lumino/widgets';

import { cellBadge, readHermesMeta } from '../model/cell-badge';
import { sha256Hex } from '../model/sha256';

/** How long the notebook is left to settle before its badges are looked at again (ms). */
const REFRESH_MS = 400;

export const cellBadgesPlugin: JupyterFrontEndPlugin<void> = {
  id: 'hermes-jupyter:cell-badges',
  description: 'Marks the cells Hermes created or changed, and those edited since.',
  autoStart: true,
  requires: [INotebookTracker],
  activate: (_app: JupyterFrontEnd, tracker: INotebookTracker) => {
    tracker.widgetAdded.connect((_, panel) => void panel.context.ready.then(() => watch(panel)));
  }
};

function watch(panel: NotebookPanel): void {
  const badges = new Map<Cell, BadgeWidget>();
  let timer: ReturnType<typeof setTimeout> | null = null;
  const schedule = () => {
    if (timer === null && !panel.isDisposed) {
      timer = setTimeout(() => {
        timer = null;
        void refresh(panel, badges);
      }, REFRESH_MS);
    }
  };
  panel.content.modelContentChanged.connect(schedule);
  panel.model?.sharedModel.changed.connect(schedule);
  panel.context.fileChanged.connect(schedule);
  panel.disposed.connect(() => timer !== null && clearTimeout(timer));
  schedule();
}

async function refresh(panel: NotebookPanel, badges: Map<Cell, BadgeWidget>): Promise<void> {
  const cells = new Set(panel.content.widgets);
  for (const [cell, badge] of badges) {
    if (!cells.has(cell) || cell.isDisposed || badge.isDisposed) {
      badge.dispose();
      badges.delete(cell);
    }
  }
  for (const cell of cells) {
    const meta = readHermesMeta(cell.model.getMetadata('hermes'));
    let badge = badges.get(cell);
    if (!meta) {
      badge?.dispose();
      badges.delete(cell);
      continue;
    }
    if (!badge) {
      badge = new BadgeWidget();
      (cell.layout as PanelLayout).insertWidget(0, badge);
      badges.set(cell, badge);
    }
    const sha = meta.source_sha256 ? await sha256Hex(cell.model.sharedModel.getSource()) : null;
    if (!badge.isDisposed) {
      badge.render(cellBadge(meta, sha), cell.model.id);
    }
  }
}

class BadgeWidget extends Widget {
  constructor() {
    super({ node: document.createElement('div') });
    this.addClass('jp-HermesCellBadge');
    this._label = document.createElement('span');
    this._label.className = 'jp-HermesCellBadge-label';
    this.node.appendChild(this._label);
  }

  render(badge: { text: string; title: string; edited: boolean }, cellId: string): void {
    this._label.textContent = badge.text;
    this._label.title = badge.title;
    this.node.dataset.hermesBadge = badge.edited ? 'edited' : 'agent';
    this.node.dataset.hermesCellId = cellId;
    this.toggleClass('jp-mod-edited', badge.edited);
  }

  private _label: HTMLSpanElement;
}
