/**
 * The cells a turn changed in a notebook, as the views show them (docs/notebook-edits.md).
 *
 * The server journals one `cell_change` row per change the agent made (insert, edit, delete,
 * run), read back from the notebook. A view shows one card per turn listing each changed cell
 * once: what was done to it, in order, its source before the turn and after it, its last run.
 * Keep / Undo act per cell and per turn; what was decided lives on the server (the session's
 * `cell_undo` record), so every view shows "undone" or "kept" after a reload.
 */
import type { CellAction, ICellChangeRow as IFoldedCellChange } from '../api/generated';

export type CellChangeAction = CellAction;

/** One `cell_change` row as the folds make it (one per change, read back from the notebook). */
export interface ICellChangeRow extends IFoldedCellChange {
  /** When the server made the change (seconds since the epoch), where the row says. */
  at: number | null;
}

/** One changed cell of a turn, every change to it folded together. */
export interface ICellSummary {
  cell_id: string;
  path: string;
  cell_type: string;
  /** What was done, in order ("insert", "run", "edit", "run"), applied changes only. */
  actions: CellChangeAction[];
  /** The source before the turn touched it; null when the turn created the cell. */
  before: string | null;
  /** The source the turn left; null when the turn deleted the cell. */
  after: string | null;
  execution_count: number | null;
  outputs_summary: string | null;
  /** Changes that were not made, with the server's reason. */
  refused: { action: CellChangeAction; why: string }[];
  /** The server's record of a decision on any of this cell's rows. */
  review: 'kept' | 'undone' | null;
}

/** A turn's changed cells: shown as one card, where the turn's first change was. */
export interface ICellChangeGroup {
  kind: 'cell_changes';
  id: string;
  run_id: string;
  cells: ICellSummary[];
  /** The turn's rows, as journaled. */
  changes: ICellChangeRow[];
}

const ACTIONS: ReadonlySet<unknown> = new Set(['insert', 'edit', 'delete', 'run']);

type Loose = { [key: string]: unknown };

function str(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

/** The run a row belongs to: its `run_id`, else its id's prefix (`<run>:cell_change:<n>`). */
export function runOfRowId(id: string): string {
  const at = id.indexOf(':cell_change');
  if (at > 0) {
    return id.slice(0, at);
  }
  const colon = id.indexOf(':');
  return colon > 0 ? id.slice(0, colon) : id;
}

/** A `cell_change` row read as the server folds it; null for any other row or a malformed one. */
export function readCellChange(row: unknown): ICellChangeRow | null {
  if (!row || typeof row !== 'object') {
    return null;
  }
  const r = row as Loose;
  const id = str(r.id);
  const cellId = str(r.cell_id);
  if (r.kind !== 'cell_change' || !id || !cellId || !ACTIONS.has(r.action)) {
    return null;
  }
  const count = r.execution_count;
  return {
    kind: 'cell_change',
    id,
    run_id: str(r.run_id) || runOfRowId(id),
    action: r.action as CellChangeAction,
    cell_id: cellId,
    applied: r.applied !== false,
    why: str(r.why),
    path: str(r.path) ?? '',
    index: Number.isInteger(r.index) ? (r.index as number) : null,
    cell_type: str(r.cell_type),
    before_source: str(r.before_source),
    after_source: str(r.after_source),
    source_sha256: str(r.source_sha256),
    execution_count: Number.isInteger(count) ? (count as number) : null,
    outputs_summary: str(r.outputs_summary),
    landed: r.landed === 'room' ? 'room' : 'file',
    tool_call_id: str(r.tool_call_id) ?? '',
    at: typeof r.at === 'number' && Number.isFinite(r.at) ? r.at : null,
    review: r.review === 'kept' || r.review === 'undone' ? r.review : null
  };
}

/** Every change to one cell in a turn, folded into what the card shows. */
export function summarizeCell(changes: readonly ICellChangeRow[]): ICellSummary {
  const first = changes[0];
  const summary: ICellSummary = {
    cell_id: first.cell_id,
    path: first.path,
    cell_type: first.cell_type ?? 'code',
    actions: [],
    before: null,
    after: null,
    execution_count: null,
    outputs_summary: null,
    refused: [],
    review: null
  };
  let touched = false;
  for (const change of changes) {
    summary.review = change.review ?? summary.review;
    if (!change.applied) {
      summary.refused.push({ action: change.action, why: change.why ?? 'The notebook was not changed.' });
      continue;
    }
    summary.actions.push(change.action);
    summary.cell_type = change.cell_type ?? summary.cell_type;
    if (!touched) {
      // The cell as it was before the turn: none for an insert, else what the first change found
      // (a run changes no source, so what it ran is what was there).
      summary.before = change.action === 'insert' ? null : (change.before_source ?? change.after_source);
      summary.after = summary.before;
      touched = true;
    }
    if (change.action === 'run') {
      summary.execution_count = change.execution_count;
      summary.outputs_summary = change.outputs_summary;
      summary.after = change.after_source ?? summary.after;
    } else {
      summary.after = change.action === 'delete' ? null : change.after_source;
    }
  }
  return summary;
}

/** A turn's changes by cell, in the order the cells were first changed. */
export function summarizeTurn(changes: readonly ICellChangeRow[]): ICellSummary[] {
  const byCell = new Map<string, ICellChangeRow[]>();
  for (const change of changes) {
    const list = byCell.get(change.cell_id) ?? [];
    list.push(change);
    byCell.set(change.cell_id, list);
  }
  return [...byCell.values()].map(summarizeCell);
}

/**
 * Rows as a view shows them: each turn's `cell_change` rows become one group, at the place of
 * the turn's first change (so the card stays where it appeared while later changes join it).
 * Other rows keep their identity; a group is a new object only when its rows changed.
 */
export function groupCellChanges<R extends { id: string }>(rows: readonly R[]): (R | ICellChangeGroup)[] {
  const byRun = new Map<string, ICellChangeRow[]>();
  for (const row of rows) {
    const change = readCellChange(row);
    if (change) {
      const list = byRun.get(change.run_id) ?? [];
      list.push(change);
      byRun.set(change.run_id, list);
    }
  }
  if (byRun.size === 0) {
    return [...rows];
  }
  const out: (R | ICellChangeGroup)[] = [];
  const placed = new Set<string>();
  for (const row of rows) {
    const change = readCellChange(row);
    if (!change) {
      out.push(row);
    } else if (!placed.has(change.run_id)) {
      placed.add(change.run_id);
      const run = change.run_id;
      const changes = byRun.get(run)!;
      out.push({ kind: 'cell_changes', id: `${run}:cell_changes`, run_id: run, cells: summarizeTurn(changes), changes });
    }
  }
  return out;
}

/** The runs whose changes a rewind to before `runId` undoes: that run and every later one, newest first. */
export function rewindOrder(runsInOrder: readonly string[], runId: string): string[] {
  const at = runsInOrder.indexOf(runId);
  return at < 0 ? [] : runsInOrder.slice(at).reverse();
}

/** The runs of these rows that changed cells, oldest first. */
export function runsWithChanges(rows: readonly unknown[]): string[] {
  const runs: string[] = [];
  for (const row of rows) {
    const change = readCellChange(row);
    if (change && change.applied && !runs.includes(change.run_id)) {
      runs.push(change.run_id);
    }
  }
  return runs;
}
