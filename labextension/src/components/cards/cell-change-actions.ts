/**
 * What a card of changed cells can do: Keep / Undo per cell and per turn, Rewind (undo this turn
 * and every later one). Provided by the cell-changes plugin; without it cards only display.
 * The same provider serves every view (sidebar and a `%%hermes` cell's output), so it is also
 * reachable outside a card context.
 */
import type { ISignal } from '@lumino/signaling';

import type { ICellChangeRow, ICellSummary } from '../../model/cell-changes';
import type { CellReview, IUndoAnswer } from '../../model/cell-review';

export interface ICellChangeActions {
  /** Changes when a decision was recorded here or the session's record changed. */
  readonly changed: ISignal<unknown, void>;
  /** The person's decision on this cell of this run: here, else the server's record. */
  reviewOf(runId: string, cell: ICellSummary): CellReview;
  /** Undo the run's changes (all its cells, or those named); the server's answer. */
  undo(runId: string, cellIds?: string[]): Promise<IUndoAnswer>;
  /** Keep the run's changes (all its cells, or those named). */
  keep(runId: string, cellIds?: string[]): Promise<void>;
  /** How many turns "Rewind to before this turn" undoes from here (0: not offered in this view). */
  rewindCount(runId: string): number;
  /** Undo this turn's changes and every later turn's, newest first; the answers summed. */
  rewind(runId: string): Promise<IUndoAnswer>;
  /** A view shows these changes: a notebook open here that does not hold them yet takes them. */
  seen?(changes: readonly ICellChangeRow[]): void;
}

let shared: ICellChangeActions | null = null;

/** Set once by the plugin that provides the actions. */
export function provideCellChangeActions(actions: ICellChangeActions): void {
  shared = actions;
}

export function sharedCellChangeActions(): ICellChangeActions | null {
  return shared;
}
