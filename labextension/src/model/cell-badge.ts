/**
 * The badge on a cell Hermes created or changed (docs/notebook-edits.md): read from the cell's
 * `metadata.hermes` (its run, model, who approved, the sha256 of the source it left), it says so
 * in a line above the cell, and "edited since" once the source no longer matches that hash.
 */
import { actionWords } from './cell-review';
import type { CellChangeAction } from './cell-changes';

export interface IHermesCellMeta {
  run_id: string;
  model: string | null;
  approvedBy: string | null;
  source_sha256: string | null;
  actions: CellChangeAction[];
}

export interface ICellBadge {
  text: string;
  title: string;
  edited: boolean;
}

const ACTIONS: ReadonlySet<unknown> = new Set(['insert', 'edit', 'delete', 'run']);

/** Who approved, in words: a person's name, a standing rule, or null when nobody had to. */
function approver(value: unknown): string | null {
  if (!value || typeof value !== 'object') {
    return null;
  }
  const { kind, user } = value as { kind?: unknown; user?: unknown };
  if (typeof user === 'string' && user) {
    return user;
  }
  return kind === 'policy' ? 'a standing rule' : kind === 'person' ? 'a person' : null;
}

/** `metadata.hermes` as the server writes it; null when the cell has none (or not an object). */
export function readHermesMeta(value: unknown): IHermesCellMeta | null {
  if (!value || typeof value !== 'object' || Array.isArray(value)) {
    return null;
  }
  const v = value as { [key: string]: unknown };
  return {
    run_id: typeof v.run_id === 'string' ? v.run_id : '',
    model: typeof v.model === 'string' && v.model ? v.model : null,
    approvedBy: approver(v.approved_by),
    source_sha256: typeof v.source_sha256 === 'string' ? v.source_sha256 : null,
    actions: Array.isArray(v.actions) ? (v.actions.filter(a => ACTIONS.has(a)) as CellChangeAction[]) : []
  };
}

/** The badge for a cell with this provenance whose source hashes to `sourceSha` (null: not known yet). */
export function cellBadge(meta: IHermesCellMeta, sourceSha: string | null): ICellBadge {
  const edited = !!meta.source_sha256 && sourceSha !== null && sourceSha !== meta.source_sha256;
  const did = meta.actions.length ? actionWords(meta.actions).toLowerCase() : 'changed';
  const parts = [`Hermes ${did} this cell`];
  if (meta.model) {
    parts.push(`with ${meta.model}`);
  }
  const title = [
    `${parts.join(' ')}.`,
    meta.approvedBy ? `Running it was approved by ${meta.approvedBy}.` : '',
    edited ? 'Its source was edited since.' : '',
    meta.run_id ? `Run ${meta.run_id}.` : ''
  ]
    .filter(Boolean)
    .join(' ');
  return { text: edited ? 'Hermes · edited since' : `Hermes · ${did}`, title, edited };
}
