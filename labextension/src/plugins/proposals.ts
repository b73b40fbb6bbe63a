/**
 * Proposed cells in the notebook: each pending proposal of the open chat is
 * shown next to its target cell (the cell it goes below or replaces; the last
 * cell for an insert at the end) with Accept / Reject, and the sidebar card
 * gets the same actions. Accept records the decision with the server, then
 * applies the cell through the notebook's shared model; nothing is executed.
 * With no notebook open a proposal stays a card in the sidebar.
 */
import { JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import type { Cell } from '@jupyterlab/cells';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { ReactWidget } from '@jupyterlab/ui-components';
import { ISignal, Signal } from '@lumino/signaling';
import { PanelLayout, Widget } from '@lumino/widgets';
import React from 'react';

import type { IAnsweredBy, IProposalRow, ProposalStatus } from '../api/rows';
import type { IProposalActions } from '../components/cards/proposal-actions';
import { ProposalView } from '../components/cards/proposal-card';
import { cellIndex, deleteCell, insertCell, replaceSource } from '../model/notebook-edits';
import { IHermesChat } from '../tokens';

export const proposalsPlugin: JupyterFrontEndPlugin<void> = {
  id: 'hermes-jupyter:proposals',
  description: 'Shows cells Hermes proposes next to their target cell, with Accept and Reject.',
  autoStart: true,
  requires: [IHermesChat, INotebookTracker],
  activate: (_app: JupyterFrontEnd, hermes: IHermesChat, tracker: INotebookTracker) => {
    hermes.chat.cardActions.proposals = new NotebookProposals(hermes, tracker);
  }
};

/** A proposal's run: its row id is `<run>:proposal:<proposal_id>`. */
function runOf(row: IProposalRow): string {
  const at = row.id.lastIndexOf(':proposal:');
  return at > 0 ? row.id.slice(0, at) : '';
}

class NotebookProposals implements IProposalActions {
  constructor(
    private _hermes: IHermesChat,
    private _tracker: INotebookTracker
  ) {
    _hermes.chat.changed.connect(this._sync, this);
    _tracker.widgetAdded.connect((_, panel) => {
      void panel.context.ready.then(() => {
        panel.content.model?.cells.changed.connect(() => this._sync());
        this._emit();
      });
      panel.disposed.connect(() => this._emit());
    });
    _tracker.currentChanged.connect(() => this._emit());
  }

  get changed(): ISignal<this, void> {
    return this._changed;
  }

  statusOf(row: IProposalRow): ProposalStatus {
    return this._decided.get(row.id)?.status ?? row.status;
  }

  answeredByOf(row: IProposalRow): IAnsweredBy | null {
    const decided = this._decided.get(row.id);
    return decided ? decided.answered_by ?? null : row.answered_by;
  }

  targetOf(_row: IProposalRow): string | null {
    return this._panelFor()?.context.localPath ?? null;
  }

  async accept(row: IProposalRow): Promise<void> {
    const panel = this._panelFor();
    if (!panel) {
      throw new Error('Open the notebook to accept this cell.');
    }
    const at = row.action === 'insert_end' ? Number.MAX_SAFE_INTEGER : row.cell_id ? cellIndex(panel, row.cell_id) : -1;
    if (at < 0) {
      throw new Error('The cell this was proposed for is no longer in the notebook. Reject it, or ask again.');
    }
    await this._decide(row, 'accepted');
    if (row.action === 'replace') {
      replaceSource(panel, row.cell_id!, row.source);
    } else if (row.action === 'delete') {
      deleteCell(panel, row.cell_id!);
    } else {
      insertCell(panel, row.action === 'insert_end' ? at : at + 1, row.cell_type, row.source);
    }
  }

  async reject(row: IProposalRow): Promise<void> {
    await this._decide(row, 'rejected');
  }

  /** Save first (the server's record is what every client shows), then show it here. */
  private async _decide(row: IProposalRow, decision: 'accepted' | 'rejected'): Promise<void> {
    const answer = await this._hermes.client.decideProposal(runOf(row), row.proposal_id, decision);
    this._decided.set(row.id, answer);
    this._emit();
  }

  /** The notebook the open chat works on: its bound notebook when that is open, else (unbound) the current one. */
  private _panelFor(): NotebookPanel | null {
    const path = this._hermes.chat.session?.notebook_path;
    if (path) {
      return this._tracker.find(panel => panel.context.path === path) ?? null;
    }
    return this._tracker.currentWidget;
  }

  private _emit(): void {
    this._changed.emit();
    this._sync();
  }

  /** Show each pending proposal next to its cell; drop the ones decided, gone or moved. */
  private _sync(): void {
    const panel = this._panelFor();
    const wanted = new Map<string, { row: IProposalRow; cell: Cell }>();
    for (const row of this._hermes.chat.rows) {
      if (row.kind !== 'proposal' || this.statusOf(row) !== 'pending' || !panel) {
        continue;
      }
      const cell = anchorCell(panel, row);
      if (cell) {
        wanted.set(row.id, { row, cell });
      }
    }
    for (const [id, shown] of this._inline) {
      const want = wanted.get(id);
      if (!want || want.cell !== shown.cell || shown.widget.isDisposed) {
        shown.widget.dispose();
        this._inline.delete(id);
      }
    }
    for (const [id, { row, cell }] of wanted) {
      if (!this._inline.has(id)) {
        const widget = ReactWidget.create(React.createElement(ProposalView, { row, actions: this, inline: true }));
        widget.addClass('jp-HermesProposal-inline');
        (cell.layout as PanelLayout).addWidget(widget);
        this._inline.set(id, { cell, widget });
      }
    }
  }

  private _decided = new Map<string, IProposalRow>();
  private _inline = new Map<string, { cell: Cell; widget: Widget }>();
  private _changed = new Signal<this, void>(this);
}

/** The cell a proposal is shown at: its target cell, or the last cell for an insert at the end. */
function anchorCell(panel: NotebookPanel, row: IProposalRow): Cell | null {
  const cells = panel.content.widgets;
  if (row.action === 'insert_end' || !row.cell_id) {
    return cells.length ? cells[cells.length - 1] : null;
  }
  return cells.find(cell => cell.model.id === row.cell_id) ?? null;
}
