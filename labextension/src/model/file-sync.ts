/**
 * With collaboration off, the server writes an agent's change into the notebook file
 * (docs/notebook-edits.md) while this page may hold the notebook open. The open document then
 * catches up: reverted from disk when it has no unsaved changes, else the changed cells are
 * taken from disk into the document, so the person's other unsaved edits stay and the next save
 * carries both. These are the pure decisions; plugins/cell-changes.ts applies them.
 */
import type { ICellChangeRow } from './cell-changes';

/** A cell as both sides are compared: the document's (shared model) or the file's (nbformat). */
export interface ISyncCell {
  id: string;
  source: string;
  execution_count?: number | null;
}

/** A file cell as nbformat has it (source may be a list of lines). */
export interface IDiskCell {
  id?: string;
  cell_type: string;
  source: string | string[];
  metadata?: { [key: string]: unknown };
  outputs?: unknown[];
  execution_count?: number | null;
}

export type SyncOp =
  | { op: 'update'; id: string; cell: IDiskCell }
  | { op: 'insert'; index: number; cell: IDiskCell }
  | { op: 'delete'; id: string };

export function diskSource(cell: IDiskCell): string {
  return Array.isArray(cell.source) ? cell.source.join('') : (cell.source ?? '');
}

/** Whether the document already shows this change (it was loaded after it, or applied before). */
export function reflects(cells: readonly ISyncCell[], change: ICellChangeRow): boolean {
  const cell = cells.find(c => c.id === change.cell_id);
  switch (change.action) {
    case 'delete':
      return !cell;
    case 'run':
      return !!cell && (cell.execution_count ?? null) === change.execution_count;
    default:
      return !!cell && cell.source === (change.after_source ?? cell.source);
  }
}

/**
 * What to do to the document so the named cells read as the file has them: update a cell both
 * have, insert one only the file has (at the file's place), delete one the file no longer has.
 */
export function planSync(doc: readonly ISyncCell[], disk: readonly IDiskCell[], ids: readonly string[]): SyncOp[] {
  const ops: SyncOp[] = [];
  // Deletions first, then inserts by their place in the file, so each lands where the file has it.
  ids = [...ids].sort((a, b) => disk.findIndex(c => c.id === a) - disk.findIndex(c => c.id === b));
  for (const id of new Set(ids)) {
    const index = disk.findIndex(c => c.id === id);
    const inDoc = doc.some(c => c.id === id);
    if (index >= 0 && inDoc) {
      ops.push({ op: 'update', id, cell: disk[index] });
    } else if (index >= 0) {
      ops.push({ op: 'insert', index, cell: disk[index] });
    } else if (inDoc) {
      ops.push({ op: 'delete', id });
    }
  }
  return ops;
}

/**
 * The cells of this notebook whose file changes the document must still take: changes applied to
 * the file after the document last read or wrote it (`isNew`), judged by each cell's latest
 * change, and not already shown.
 */
export function pendingFileCells(
  changes: readonly ICellChangeRow[],
  path: string,
  cells: readonly ISyncCell[],
  isNew: (change: ICellChangeRow) => boolean
): string[] {
  const latest = new Map<string, ICellChangeRow>();
  for (const c of changes) {
    if (c.applied && c.landed === 'file' && c.path === path) {
      latest.set(c.cell_id, c);
    }
  }
  return [...latest.values()].filter(c => isNew(c) && !reflects(cells, c)).map(c => c.cell_id);
}

/** The file changed since the document read it (its time is later, beyond JupyterLab's own margin). */
export function fileIsNewer(fileTime: number, loadedAt: number | null, marginMs = 500): boolean {
  return loadedAt === null || fileTime - loadedAt > marginMs;
}

/** What a contents model says of a file's version: its content hash (when asked) and its time. */
export interface IFileVersion {
  hash?: string | null;
  last_modified?: string;
}

/**
 * The file holds a version the document has not read. By content hash when both sides have one,
 * as JupyterLab itself decides before saving: exact, so two agent writes within JupyterLab's time
 * margin (a cell inserted, then run) are still two versions. Else by time, beyond that margin.
 */
export function fileChangedSince(file: IFileVersion, read: IFileVersion | null | undefined): boolean {
  if (file.hash && read?.hash) {
    return file.hash !== read.hash;
  }
  return fileIsNewer(fileTime(file.last_modified) ?? 0, fileTime(read?.last_modified));
}

/** A contents model's time in ms (null when it has none). */
export function fileTime(value: string | undefined): number | null {
  const time = value ? Date.parse(value) : NaN;
  return Number.isFinite(time) ? time : null;
}
