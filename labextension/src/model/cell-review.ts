/**
 * Keep / Undo of a turn's changed cells, in words (docs/notebook-edits.md). A cell's review is
 * what the person decided: kept, undone, or a conflict (someone changed the cell after the agent,
 * so Undo left it as it is). The server records kept and undone per `<run>:<cell_id>` in the
 * session (`cell_undo`), so these survive reloads; a conflict is the answer to one Undo.
 */
import type { CellChangeAction, ICellSummary } from './cell-changes';

export type CellReview = 'pending' | 'kept' | 'undone' | 'conflict';

/** `POST runs/{run_id}/notebook/undo` answers which cells it restored and which it left alone. */
export interface IUndoAnswer {
  restored: string[];
  conflicts: string[];
}

export const CONFLICT_WORDS = 'You or a collaborator changed this cell since; it was left as it is.';

const REVIEW_WORDS: { [review in CellReview]: string } = {
  pending: '',
  kept: 'Kept.',
  undone: 'Undone: the cell is back as it was before this turn.',
  conflict: CONFLICT_WORDS
};

export function reviewWords(review: CellReview): string {
  return REVIEW_WORDS[review];
}

export function reviewKey(runId: string, cellId: string): string {
  return `${runId}:${cellId}`;
}

function ids(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

/** The undo route's answer, tolerating a missing list (none restored, none in conflict). */
export function readUndoAnswer(body: unknown): IUndoAnswer {
  const b = (body && typeof body === 'object' ? body : {}) as { restored?: unknown; conflicts?: unknown };
  return { restored: ids(b.restored), conflicts: ids(b.conflicts) };
}

/** The server's record for one cell (`session.cell_undo[<run>:<cell>]`: "kept", or who undid it and when). */
export function recordedReview(record: unknown, runId: string, cellId: string): 'kept' | 'undone' | null {
  if (!record || typeof record !== 'object') {
    return null;
  }
  const value = (record as { [key: string]: unknown })[reviewKey(runId, cellId)];
  if (value === undefined || value === null) {
    return null;
  }
  return value === 'kept' ? 'kept' : 'undone';
}

/** One Undo's outcome as a sentence: what came back, what was left alone and why. */
export function undoAnswerWords(answer: IUndoAnswer): string {
  const restored = answer.restored.length;
  const conflicts = answer.conflicts.length;
  const cells = (n: number) => (n === 1 ? '1 cell' : `${n} cells`);
  const back = restored ? `Restored ${cells(restored)}.` : conflicts ? '' : 'Nothing left to undo.';
  const left = conflicts
    ? ` ${cells(conflicts)} changed since the agent wrote ${conflicts === 1 ? 'it' : 'them'}: left as ${conflicts === 1 ? 'it is' : 'they are'}.`
    : '';
  return (back + left).trim();
}

const VERBS: { [action in CellChangeAction]: string } = {
  insert: 'added',
  edit: 'edited',
  delete: 'deleted',
  run: 'ran'
};

/** "Added, ran, edited, ran": what the turn did to a cell, in order (repeats of one action once). */
export function actionWords(actions: readonly CellChangeAction[]): string {
  const steps = actions.filter((a, i) => a !== actions[i - 1]).map(a => VERBS[a]);
  const words = steps.join(', ');
  return words ? words[0].toUpperCase() + words.slice(1) : 'Not changed';
}

/** The cell's title line: its kind and what happened to it. */
export function cellTitle(cell: ICellSummary): string {
  const kind = cell.cell_type === 'markdown' ? 'Markdown cell' : cell.cell_type === 'raw' ? 'Raw cell' : 'Code cell';
  return `${kind}: ${actionWords(cell.actions).toLowerCase()}`;
}

/** "Ran [3]: 2 lines of text" — the cell's last run, or null when the turn did not run it. */
export function runWords(cell: ICellSummary): string | null {
  if (!cell.actions.includes('run')) {
    return null;
  }
  const count = cell.execution_count === null ? 'Ran' : `Ran [${cell.execution_count}]`;
  return cell.outputs_summary ? `${count}: ${cell.outputs_summary}` : `${count}, no output.`;
}

/** Whether a Keep / Undo still means something for this cell (something was applied, nothing decided). */
export function reviewable(cell: ICellSummary, review: CellReview): boolean {
  return review === 'pending' && cell.actions.some(a => a !== 'run');
}
