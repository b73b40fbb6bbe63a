/**
 * Agent edits in the open page (docs/notebook-edits.md): Keep / Undo / Rewind for the cards of
 * changed cells, and, with collaboration off, an open notebook catching up with what the server
 * wrote to its file (the agent's change, or an Undo): reverted from disk when it has no unsaved
 * changes, else the changed cells are taken from disk so the person's other edits stay.
 * Under collaboration the server changes the room's document, which every page already shows.
 */
import { JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import type { ISharedCodeCell, ISharedNotebook } from '@jupyter/ydoc';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import type { Contents } from '@jupyterlab/services';

import { provideCellChangeActions } from '../components/cards/cell-change-actions';
import { CellChangeReview } from '../model/cell-change-review';
import type { ICellChangeRow } from '../model/cell-changes';
import {
  IDiskCell,
  ISyncCell,
  SyncOp,
  diskSource,
  fileChangedSince,
  fileTime,
  pendingFileCells,
  planSync
} from '../model/file-sync';
import { collaborationOn } from '../model/shared-notebook';
import { IHermesChat } from '../tokens';

export const cellChangesPlugin: JupyterFrontEndPlugin<void> = {
  id: 'hermes-jupyter:cell-changes',
  description: 'Keep, Undo and Rewind of the cells Hermes changed; open notebooks catch up with its changes.',
  autoStart: true,
  requires: [IHermesChat, INotebookTracker],
  activate: (app: JupyterFrontEnd, hermes: IHermesChat, tracker: INotebookTracker) => {
    const catchUp = new NotebookCatchUp(app.serviceManager.contents, tracker);
    const review = new CellChangeReview({
      client: hermes.client,
      rows: () => hermes.chat.rows,
      session: () => hermes.chat.session,
      sessionChanged: hermes.chat.changed,
      restored: changes => catchUp.restored(changes),
      seen: changes => catchUp.seen(changes)
    });
    hermes.chat.cardActions.cellChanges = review;
    provideCellChangeActions(review);
  }
};

class NotebookCatchUp {
  constructor(
    private _contents: Contents.IManager,
    private _tracker: INotebookTracker
  ) {
    // When each document last read or wrote its file, by this page's clock (for rows without a time).
    _tracker.widgetAdded.connect((_, panel) => {
      const read = () => this._readAt.set(panel, Date.now());
      void panel.context.ready.then(read);
      panel.context.fileChanged.connect(read);
      panel.disposed.connect(() => this._readAt.delete(panel));
    });
  }

  /** Changes a view shows: each open notebook takes those written to its file after it read it. */
  seen(changes: readonly ICellChangeRow[]): void {
    const now = Date.now();
    changes.forEach(c => this._firstSeen.has(c.id) || this._firstSeen.set(c.id, now));
    for (const path of new Set(changes.map(c => c.path))) {
      this._queue(path, async panel => {
        const loaded = fileTime(panel.context.contentsModel?.last_modified);
        const readAt = this._readAt.get(panel) ?? 0;
        const isNew = (c: ICellChangeRow) =>
          c.at !== null && loaded !== null ? c.at * 1000 > loaded : (this._firstSeen.get(c.id) ?? 0) > readAt;
        const ids = pendingFileCells(changes, path, docCells(panel), isNew);
        if (!ids.length) {
          return [];
        }
        // Only a file written since the document read it has anything to give.
        const stat = await this._contents.get(panel.context.path, { content: false, hash: true });
        return fileChangedSince(stat, panel.context.contentsModel) ? ids : [];
      });
    }
  }

  /** An Undo restored these changes in the file: the open notebook shows the cells as restored. */
  async restored(changes: readonly ICellChangeRow[]): Promise<void> {
    const fileChanges = changes.filter(c => c.landed === 'file');
    await Promise.all(
      [...new Set(fileChanges.map(c => c.path))].map(path =>
        this._queue(path, async () => fileChanges.filter(c => c.path === path).map(c => c.cell_id))
      )
    );
  }

  /** One catch-up at a time per notebook; what to take is decided when its turn comes. */
  private _queue(path: string, cellsOf: (panel: NotebookPanel) => Promise<string[]>): Promise<void> {
    const next = (this._running.get(path) ?? Promise.resolve()).then(async () => {
      const panel = this._panel(path);
      const ids = panel ? await cellsOf(panel) : [];
      if (panel && ids.length) {
        await this._catchUp(panel, ids);
      }
    });
    const settled = next.catch(error => console.warn(`Hermes: ${path} could not show the agent's change`, error));
    this._running.set(path, settled);
    return settled;
  }

  /** The open, non-collaborative notebook at this path, once loaded; null otherwise. */
  private _panel(path: string): NotebookPanel | null {
    if (!path || collaborationOn(this._tracker)) {
      return null;
    }
    const panel = this._tracker.find(p => p.context.localPath === path && p.context.isReady) ?? null;
    return panel && panel.model && !panel.model.collaborative ? panel : null;
  }

  private async _catchUp(panel: NotebookPanel, ids: string[]): Promise<void> {
    const context = panel.context;
    if (!context.model.dirty) {
      await context.revert();
      return;
    }
    const file = await this._contents.get(context.path, { type: 'notebook', content: true, hash: true });
    const cells = ((file.content as { cells?: IDiskCell[] } | null)?.cells ?? []) as IDiskCell[];
    const shared = panel.model!.sharedModel;
    // One op at a time: the notebook's list of cells is brought up to date only after each change.
    planSync(docCells(panel), cells, ids).forEach(op => applyOp(shared, op));
    adoptFileVersion(context, file);
  }

  private _running = new Map<string, Promise<void>>();
  private _readAt = new Map<NotebookPanel, number>();
  private _firstSeen = new Map<string, number>();
}

function docCells(panel: NotebookPanel): ISyncCell[] {
  return (panel.model?.sharedModel.cells ?? []).map(cell => ({
    id: cell.getId(),
    source: cell.getSource(),
    execution_count: cell.cell_type === 'code' ? (cell as ISharedCodeCell).execution_count : null
  }));
}

function applyOp(shared: ISharedNotebook, op: SyncOp): void {
  if (op.op === 'insert') {
    const { cell } = op;
    shared.insertCell(Math.min(op.index, shared.cells.length), {
      id: cell.id,
      cell_type: cell.cell_type as 'code',
      source: diskSource(cell),
      metadata: (cell.metadata ?? {}) as any,
      ...(cell.cell_type === 'code' ? { outputs: (cell.outputs ?? []) as any, execution_count: cell.execution_count ?? null } : {})
    });
    return;
  }
  const index = shared.cells.findIndex(c => c.getId() === op.id);
  if (index < 0) {
    return;
  }
  if (op.op === 'delete') {
    shared.deleteCell(index);
    return;
  }
  const target = shared.cells[index];
  target.setSource(diskSource(op.cell));
  const hermes = op.cell.metadata?.hermes;
  if (hermes !== undefined) {
    target.setMetadata('hermes', hermes as any);
  } else {
    target.deleteMetadata('hermes');
  }
  if (target.cell_type === 'code') {
    (target as ISharedCodeCell).setOutputs((op.cell.outputs ?? []) as any);
    (target as ISharedCodeCell).execution_count = op.cell.execution_count ?? null;
  }
}

/**
 * The document now holds the file's version of the cells the server changed, so its next save
 * is no overwrite of a newer file: record the file's time and hash as the ones the document last
 * read (JupyterLab compares them before saving and otherwise asks whether to overwrite). The
 * context keeps them in a private field; without that field nothing is changed and JupyterLab
 * asks as before.
 */
function adoptFileVersion(context: NotebookPanel['context'], file: Contents.IModel): void {
  const holder = context as unknown as { _contentsModel?: { [key: string]: unknown } | null };
  if (holder._contentsModel && file.last_modified) {
    const hash = file.hash ? { hash: file.hash, hash_algorithm: file.hash_algorithm } : {};
    holder._contentsModel = { ...holder._contentsModel, last_modified: file.last_modified, ...hash };
  }
}
