/**
 * Journal payload → transcript row, one pure function per kind (docs/transcript.md).
 * The live fold (transcript.ts) decides where rows go; these only read payloads,
 * the way the server's fold reads them (same defaults, same coercions).
 */
import { IJournalRow, STATUS_KINDS } from '../api/contract';
import {
  IAnsweredBy,
  IApprovalRow,
  ICellChangeRow,
  IClarifyRow,
  IMarkerRow,
  INoteRow,
  IPlanItem,
  IProposalRow,
  IToolRow,
  IUsageRow,
  MarkerVariant
} from '../api/rows';

export type Payload = { [key: string]: unknown };

/** A string, a non-string made one, or null when absent. */
export function text(value: unknown): string | null {
  return value === null || value === undefined ? null : typeof value === 'string' ? value : String(value);
}

function int(value: unknown): number | null {
  return Number.isInteger(value) ? (value as number) : null;
}

function num(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.map(String) : [];
}

const ANSWERERS: ReadonlySet<unknown> = new Set(['person', 'timeout', 'policy']);

/** Who answered (`{kind, user?}`), as the server reads it; null when absent or malformed (an old row). */
export function answeredBy(value: unknown): IAnsweredBy | null {
  if (!value || typeof value !== 'object' || Array.isArray(value)) {
    return null;
  }
  const { kind, user } = value as Payload;
  if (!ANSWERERS.has(kind)) {
    return null;
  }
  return kind === 'person' && typeof user === 'string' && user ? { kind, user } : { kind: kind as IAnsweredBy['kind'] };
}

/** A card's own id: the payload's, else one made from the row's seq. */
export function cardId(row: IJournalRow, key: 'tid' | 'approval_id' | 'clarify_id' | 'proposal_id'): string {
  return text(row.payload[key]) || `journal-${row.seq}`;
}

export function toolRow(runId: string, row: IJournalRow): IToolRow {
  const p = row.payload;
  const tid = cardId(row, 'tid');
  const args = p.args && typeof p.args === 'object' && !Array.isArray(p.args) ? p.args : null;
  return {
    kind: 'tool',
    id: `${runId}:tool:${tid}`,
    tid,
    name: text(p.name) || 'tool',
    args: args as IToolRow['args'],
    preview: text(p.preview),
    status: 'running',
    duration_s: null
  };
}

export function completedTool(card: IToolRow, p: Payload): IToolRow {
  return {
    ...card,
    status: p.is_error ? 'error' : 'done',
    preview: text(p.preview) ?? card.preview,
    duration_s: num(p.duration) ?? card.duration_s
  };
}

export function approvalRow(runId: string, row: IJournalRow): IApprovalRow {
  const p = row.payload;
  const id = cardId(row, 'approval_id');
  return {
    kind: 'approval',
    id: `${runId}:approval:${id}`,
    approval_id: id,
    description: text(p.description),
    command: text(p.command),
    choices: strings(p.choices !== undefined ? p.choices : p.options),
    status: 'pending',
    choice: null,
    reason: null,
    answered_by: null
  };
}

export function clarifyRow(runId: string, row: IJournalRow): IClarifyRow {
  const id = cardId(row, 'clarify_id');
  return {
    kind: 'clarify',
    id: `${runId}:clarify:${id}`,
    clarify_id: id,
    question: text(row.payload.question) || '',
    choices: strings(row.payload.choices),
    status: 'pending',
    answer: null,
    reason: null,
    answered_by: null
  };
}

const ACTIONS: ReadonlySet<unknown> = new Set(['insert_below', 'insert_end', 'replace', 'delete']);

/** A proposed cell as the journal has it: always pending (the server keeps the decision apart). */
export function proposalRow(runId: string, row: IJournalRow): IProposalRow {
  const p = row.payload;
  const id = cardId(row, 'proposal_id');
  return {
    kind: 'proposal',
    id: `${runId}:proposal:${id}`,
    proposal_id: id,
    action: ACTIONS.has(p.action) ? (p.action as IProposalRow['action']) : 'insert_end',
    cell_id: text(p.cell_id),
    cell_type: p.cell_type === 'markdown' ? 'markdown' : 'code',
    source: text(p.source) || '',
    old_source: text(p.old_source),
    status: 'pending',
    answered_by: null
  };
}

const CELL_ACTIONS: ReadonlySet<unknown> = new Set(['insert', 'edit', 'delete', 'run']);

/** A change the agent made to a notebook cell, as read back (docs/notebook-edits.md); null for an unknown action. */
export function cellChangeRow(runId: string, row: IJournalRow): ICellChangeRow | null {
  const p = row.payload;
  if (!CELL_ACTIONS.has(p.action)) {
    return null;
  }
  return {
    kind: 'cell_change',
    id: `${runId}:cell_change:${row.seq}`,
    run_id: runId,
    action: p.action as ICellChangeRow['action'],
    cell_id: text(p.cell_id) || '',
    applied: p.applied !== false,
    why: text(p.why),
    path: text(p.path) || '',
    index: int(p.index),
    cell_type: text(p.cell_type),
    before_source: text(p.before_source),
    after_source: text(p.after_source),
    source_sha256: text(p.source_sha256),
    execution_count: int(p.execution_count),
    outputs_summary: text(p.outputs_summary),
    landed: p.landed === 'room' ? 'room' : 'file',
    tool_call_id: text(p.tool_call_id) || '',
    at: num(p.at),
    review: null
  };
}

/** Plan items; the Hermes Agent todo tool's `entries: [{content, status}]` shape too. Blank items are dropped. */
export function planItems(p: Payload): IPlanItem[] {
  let raw = p.items;
  let key = 'text';
  if (!Array.isArray(raw)) {
    raw = p.entries;
    key = 'content';
  }
  const items: IPlanItem[] = [];
  for (const item of Array.isArray(raw) ? raw : []) {
    if (!item || typeof item !== 'object' || Array.isArray(item)) {
      continue;
    }
    const value = text(item[key] !== undefined ? item[key] : item.text);
    if (value && value.trim()) {
      const status = item.status === 'in_progress' || item.status === 'completed' ? item.status : 'pending';
      items.push({ text: value.trim(), status });
    }
  }
  return items;
}

export function usageRow(runId: string, p: Payload): IUsageRow {
  return {
    kind: 'usage',
    id: `${runId}:usage`,
    input_tokens: int(p.input_tokens),
    output_tokens: int(p.output_tokens),
    cached_tokens: int(p.cached_tokens),
    cost_usd: num(p.cost_usd),
    duration_s: num(p.duration_s),
    model: text(p.model),
    our_count: p.our_count === true
  };
}

/** A note: the server's words (`payload.text`, or the terminal row's message at the tool limit). */
export function noteRow(
  runId: string,
  row: IJournalRow,
  variant: INoteRow['variant'],
  words: string
): INoteRow {
  const level = row.payload.level === 'warning' ? 'warning' : 'info';
  return { kind: 'note', id: `${runId}:note:${row.seq}`, variant, level, text: words };
}

/** The wait a `status` row belongs to (`kind: 'waiting'`, its `wait_id`), or null for a plain note. */
export function waitId(p: Payload): string | null {
  return p.kind === STATUS_KINDS.waiting && typeof p.wait_id === 'string' ? p.wait_id : null;
}

const VARIANTS: ReadonlySet<unknown> = new Set<MarkerVariant>(['interrupted', 'cancelled', 'error']);

/** The marker the server wrote (`payload.marker`); a foreign row without one shows its message as an error. */
export function terminalMarker(runId: string, p: Payload): IMarkerRow {
  const m = (p.marker && typeof p.marker === 'object' ? p.marker : {}) as Payload;
  const id = `${runId}:marker`;
  if (VARIANTS.has(m.variant) && typeof m.text === 'string' && m.text) {
    const cause = typeof m.cause === 'string' ? m.cause : null;
    return { kind: 'marker', id, variant: m.variant as MarkerVariant, text: m.text, cause };
  }
  return { kind: 'marker', id, variant: 'error', text: text(p.message) ?? '', cause: null };
}
