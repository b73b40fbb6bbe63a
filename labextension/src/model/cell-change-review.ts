/**
 * Keep / Undo / Rewind of agent edits for every view of the open session (docs/notebook-edits.md).
 * Decisions are recorded by the server first; what it answered is shown here at once, and after a
 * reload the session's `cell_undo` record says the same. Conflicts (a cell someone changed since)
 * are the answer to one Undo: they are shown, never retried over the person's edit.
 */
import { ISignal, Signal } from '@lumino/signaling';

import type { HermesClient } from '../api/client';
import { keepCells, undoCells } from '../api/notebook-edits';
import type { ICellChangeActions } from '../components/cards/cell-change-actions';
import { ICellChangeRow, ICellSummary, readCellChange, rewindOrder, runsWithChanges } from './cell-changes';
import { CellReview, IUndoAnswer, recordedReview, reviewKey } from './cell-review';

export interface ICellChangeReviewOptions {
  client: HermesClient;
  /** The open session's rows (settled and live), where the turns' `cell_change` rows are. */
  rows: () => readonly unknown[];
  /** The open session as the server last sent it (its `cell_undo` record). */
  session: () => unknown;
  /** Emitted when the rows or the session changed. */
  sessionChanged: ISignal<unknown, void>;
  /** After an Undo: the changes it restored, so an open notebook can show them (collaboration off). */
  restored?: (changes: ICellChangeRow[]) => Promise<void>;
  /** A view shows these changes (an open notebook may still have to take them). */
  seen?: (changes: readonly ICellChangeRow[]) => void;
}

export class CellChangeReview implements ICellChangeActions {
  constructor(private _options: ICellChangeReviewOptions) {
    _options.sessionChanged.connect(() => this._changed.emit(), this);
  }

  get changed(): ISignal<this, void> {
    return this._changed;
  }

  reviewOf(runId: string, cell: ICellSummary): CellReview {
    const record = (this._options.session() as { cell_undo?: unknown } | null)?.cell_undo;
    return (
      this._local.get(reviewKey(runId, cell.cell_id)) ??
      recordedReview(record, runId, cell.cell_id) ??
      cell.review ??
      'pending'
    );
  }

  async undo(runId: string, cellIds?: string[]): Promise<IUndoAnswer> {
    const answer = await undoCells(this._options.client, runId, cellIds);
    answer.restored.forEach(id => this._local.set(reviewKey(runId, id), 'undone'));
    answer.conflicts.forEach(id => this._local.set(reviewKey(runId, id), 'conflict'));
    this._changed.emit();
    if (answer.restored.length && this._options.restored) {
      const changes = this._changesOf(runId).filter(c => c.applied && answer.restored.includes(c.cell_id));
      await this._options.restored(changes).catch(error => console.warn('Hermes: showing the undo in the notebook', error));
    }
    return answer;
  }

  async keep(runId: string, cellIds?: string[]): Promise<void> {
    await keepCells(this._options.client, runId, cellIds);
    const ids = cellIds ?? [...new Set(this._changesOf(runId).map(c => c.cell_id))];
    ids.forEach(id => this._local.set(reviewKey(runId, id), 'kept'));
    this._changed.emit();
  }

  rewindCount(runId: string): number {
    return rewindOrder(runsWithChanges(this._options.rows()), runId).length;
  }

  /** Newest turn first, so each undo finds the cells as the turn after it left them. */
  async rewind(runId: string): Promise<IUndoAnswer> {
    const total: IUndoAnswer = { restored: [], conflicts: [] };
    for (const run of rewindOrder(runsWithChanges(this._options.rows()), runId)) {
      const answer = await this.undo(run);
      total.restored.push(...answer.restored);
      total.conflicts.push(...answer.conflicts);
    }
    return total;
  }

  seen(changes: readonly ICellChangeRow[]): void {
    this._options.seen?.(changes);
  }

  private _changesOf(runId: string): ICellChangeRow[] {
    return this._options
      .rows()
      .map(readCellChange)
      .filter((c): c is ICellChangeRow => c !== null && c.run_id === runId);
  }

  private _local = new Map<string, CellReview>();
  private _changed = new Signal<this, void>(this);
}
