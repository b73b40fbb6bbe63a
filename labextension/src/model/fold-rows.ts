/**
 * Journal payload → transcript row, one pure function per kind (docs/transcript.md).
 * The live fold (transcript.ts) decides where rows go; these only read payloads.
 */
import { IJournalRow } from '../api/contract';
import {
  IApprovalRow,
  IClarifyRow,
  IMarkerRow,
  INoteRow,
  IPlanItem,
  IToolRow,
  IUsageRow,
  MarkerVariant,
  PlanItemStatus
} from '../api/rows';

type Payload = { [key: string]: unknown };

export function str(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

function strOrNull(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

function numOrNull(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.map(String) : [];
}

/** A tool's own id: its provider tid, else one made from the row's seq. */
export function toolTid(row: IJournalRow): string {
  return str(row.payload.tid) || `journal-${row.seq}`;
}

export function toolRow(runId: string, row: IJournalRow): IToolRow {
  const p = row.payload;
  const tid = toolTid(row);
  const args = p.args && typeof p.args === 'object' && !Array.isArray(p.args) ? p.args : null;
  return {
    kind: 'tool',
    id: `${runId}:tool:${tid}`,
    tid,
    name: str(p.name),
    args: args as IToolRow['args'],
    preview: strOrNull(p.preview),
    status: 'running',
    duration_s: null
  };
}

export function completedTool(card: IToolRow, p: Payload): IToolRow {
  return {
    ...card,
    status: p.is_error === true ? 'error' : 'done',
    preview: strOrNull(p.preview) ?? card.preview,
    duration_s: numOrNull(p.duration_s ?? p.duration)
  };
}

export function approvalRow(runId: string, p: Payload): IApprovalRow {
  const id = str(p.approval_id);
  return {
    kind: 'approval',
    id: `${runId}:approval:${id}`,
    approval_id: id,
    description: strOrNull(p.description),
    command: strOrNull(p.command),
    choices: strings(p.choices ?? p.options),
    status: 'pending',
    choice: null,
    reason: null
  };
}

export function resolvedApproval(card: IApprovalRow, p: Payload): IApprovalRow {
  return { ...card, status: 'resolved', choice: strOrNull(p.choice), reason: strOrNull(p.reason) };
}

export function clarifyRow(runId: string, p: Payload): IClarifyRow {
  const id = str(p.clarify_id);
  return {
    kind: 'clarify',
    id: `${runId}:clarify:${id}`,
    clarify_id: id,
    question: str(p.question),
    choices: strings(p.choices),
    status: 'pending',
    answer: null
  };
}

export function resolvedClarify(card: IClarifyRow, p: Payload): IClarifyRow {
  return { ...card, status: 'resolved', answer: strOrNull(p.answer) };
}

const PLAN_STATUSES: ReadonlySet<string> = new Set<PlanItemStatus>(['pending', 'in_progress', 'completed']);

export function planItems(p: Payload): IPlanItem[] {
  const items = Array.isArray(p.items) ? p.items : [];
  return items.map(item => {
    const status = str(item?.status);
    return {
      text: str(item?.text),
      status: (PLAN_STATUSES.has(status) ? status : 'pending') as PlanItemStatus
    };
  });
}

export function usageRow(runId: string, p: Payload): IUsageRow {
  return {
    kind: 'usage',
    id: `${runId}:usage`,
    input_tokens: numOrNull(p.input_tokens) ?? 0,
    output_tokens: numOrNull(p.output_tokens) ?? 0,
    cached_tokens: numOrNull(p.cached_tokens),
    cost_usd: numOrNull(p.cost_usd),
    duration_s: numOrNull(p.duration_s),
    model: strOrNull(p.model)
  };
}

/** A status or compaction note; the text is the server's (`payload.text`). */
export function noteRow(runId: string, row: IJournalRow, variant: INoteRow['variant']): INoteRow {
  const level = row.payload.level === 'warning' ? 'warning' : 'info';
  return { kind: 'note', id: `${runId}:note:${row.seq}`, variant, level, text: str(row.payload.text) };
}

/** True if a terminal row ends the run at its tool-call limit (completed, with a warning). */
export function isToolLimit(row: IJournalRow): boolean {
  const p = row.payload;
  return [row.terminal_state, p.type, p.terminal_state].includes('tool_limit_reached');
}

const VARIANTS: ReadonlySet<string> = new Set<MarkerVariant>(['interrupted', 'cancelled', 'error']);

/** The terminal row's marker as the server worded it (`payload.marker`); a foreign row's message as an error. */
export function terminalMarker(runId: string, p: Payload): IMarkerRow {
  const m = (p.marker && typeof p.marker === 'object' ? p.marker : null) as Payload | null;
  const id = `${runId}:marker`;
  if (m && VARIANTS.has(str(m.variant))) {
    return { kind: 'marker', id, variant: m.variant as MarkerVariant, text: str(m.text), cause: strOrNull(m.cause) };
  }
  return { kind: 'marker', id, variant: 'error', text: str(p.message), cause: null };
}
