/**
 * Pure fold of journal rows into display rows (the TS twin of transcript.py).
 *
 * Text is split at tool boundaries; reasoning rides on its text segment; tool
 * cards are paired by `tid` (by name only when the row has no tid); terminal
 * rows become markers. `applyEvent` never mutates its input and ignores rows at
 * or below `lastSeq`, so replays and reconnects cannot duplicate text.
 */
import { IJournalRow, isTerminalRow } from '../api/contract';
import { CANCEL_MARKER_TEXT, interruptedMarkerText, markerTextOfPayload } from './markers';
import { DisplayRow, IAssistantRow, IMarkerRow, IToolRow } from './rows';

export interface ITranscript {
  /** Prefix of row ids, usually the run id. */
  readonly prefix: string;
  readonly rows: readonly DisplayRow[];
  readonly lastSeq: number;
  /** The terminal row, once seen. */
  readonly terminal: IJournalRow | null;
  /** Index in `rows` of the assistant segment receiving tokens, or -1. */
  readonly openIndex: number;
}

export function emptyTranscript(prefix: string): ITranscript {
  return { prefix, rows: [], lastSeq: 0, terminal: null, openIndex: -1 };
}

export function foldEvents(
  events: readonly IJournalRow[],
  prefix: string
): ITranscript {
  return events.reduce(applyEvent, emptyTranscript(prefix));
}

/** True if the run produced any visible output (text, reasoning or a tool). */
export function hasOutput(state: ITranscript): boolean {
  return state.rows.some(
    row =>
      row.kind === 'tool' ||
      (row.kind === 'assistant' && (row.text.trim() || row.reasoning.trim()))
  );
}

/** How a run settled without a terminal row was interrupted, if known. */
export interface ISettledMarker {
  cause: string;
  /** The server's own marker text (from the settled session). */
  text?: string;
}

/**
 * Close a transcript whose run the server settled without a terminal row (a
 * crash repaired later): the open segment stops streaming and, unless the run
 * completed, a marker says how it ended. A no-op once a terminal row was seen.
 */
export function settleWithoutTerminal(
  state: ITranscript,
  status: string,
  marker: ISettledMarker = { cause: 'unknown' }
): ITranscript {
  const cause = marker.cause;
  if (state.terminal) {
    return state;
  }
  const closed = flush(state);
  if (status === 'completed' || status === 'running') {
    return closed;
  }
  const id = `${state.prefix}:m:settled`;
  if (status === 'cancelled') {
    return push(closed, { kind: 'marker', id, variant: 'cancel', text: CANCEL_MARKER_TEXT });
  }
  if (status === 'interrupted') {
    const text = marker.text ?? interruptedMarkerText(cause, hasOutput(closed));
    return push(closed, { kind: 'marker', id, variant: 'interrupted', text, cause });
  }
  const text = '**Error:** The run failed before it finished.';
  return push(closed, { kind: 'marker', id, variant: 'error', text });
}

export function applyEvent(state: ITranscript, row: IJournalRow): ITranscript {
  if (!row || !Number.isInteger(row.seq) || row.seq <= state.lastSeq) {
    return state;
  }
  const payload = row.payload ?? {};
  let next: ITranscript = { ...state, lastSeq: row.seq };
  switch (row.event) {
    case 'token':
      return append(next, row.seq, str(payload.text), '');
    case 'reasoning':
      return append(
        next,
        row.seq,
        '',
        str(payload.text ?? payload.reasoning ?? payload.thinking)
      );
    case 'interim_assistant': {
      const text = str(payload.text);
      if (!payload.already_streamed && text.trim()) {
        const open = openRow(next);
        const sep = open && open.text && !/\s$/.test(open.text) && text ? '\n\n' : '';
        next = append(next, row.seq, sep + text, '');
      }
      return flush(next);
    }
    case 'tool':
      return push(flush(next), toolRow(next.prefix, row));
    case 'tool_complete':
      return completeTool(next, row);
    case 'approval':
      return approvalEvent(flush(next), row);
    default:
      break;
  }
  if (!isTerminalRow(row)) {
    return next;
  }
  next = { ...flush(next), terminal: row };
  const marker = terminalMarker(next, row);
  return marker ? push(next, marker) : next;
}

function str(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

function openRow(state: ITranscript): IAssistantRow | null {
  const row = state.openIndex >= 0 ? state.rows[state.openIndex] : null;
  return row && row.kind === 'assistant' ? row : null;
}

function append(
  state: ITranscript,
  seq: number,
  text: string,
  reasoning: string
): ITranscript {
  if (!text && !reasoning) {
    return state;
  }
  const rows = state.rows.slice();
  const open = openRow(state);
  if (open) {
    rows[state.openIndex] = {
      ...open,
      text: open.text + text,
      reasoning: open.reasoning + reasoning
    };
    return { ...state, rows };
  }
  rows.push({
    kind: 'assistant',
    id: `${state.prefix}:a:${seq}`,
    text,
    reasoning,
    streaming: true
  });
  return { ...state, rows, openIndex: rows.length - 1 };
}

/** Close the open segment; an all-blank segment is dropped. */
function flush(state: ITranscript): ITranscript {
  const open = openRow(state);
  if (!open) {
    return state.openIndex >= 0 ? { ...state, openIndex: -1 } : state;
  }
  const rows = state.rows.slice();
  const text = open.text.trim();
  const reasoning = open.reasoning.trim();
  if (!text && !reasoning) {
    rows.splice(state.openIndex, 1);
  } else {
    rows[state.openIndex] = { ...open, text, reasoning, streaming: false };
  }
  return { ...state, rows, openIndex: -1 };
}

function push(state: ITranscript, row: DisplayRow): ITranscript {
  return { ...state, rows: [...state.rows, row] };
}

function toolRow(prefix: string, row: IJournalRow): IToolRow {
  const p = row.payload ?? {};
  const args = p.args && typeof p.args === 'object' ? p.args : null;
  return {
    kind: 'tool',
    id: `${prefix}:t:${row.seq}`,
    tid: str(p.tid) || `journal-${row.seq}`,
    name: str(p.name) || 'tool',
    args: args as IToolRow['args'],
    preview: str(p.preview),
    done: false,
    isError: false,
    duration: null
  };
}

/** The open card a completion belongs to: by provider tid, else (as in
 * transcript.py) the newest open card of that name that has no tid either. */
function findOpenCard(rows: readonly DisplayRow[], tid: string, name: string): number {
  if (tid) {
    const index = rows.findIndex(r => r.kind === 'tool' && !r.done && r.tid === tid);
    if (index >= 0) {
      return index;
    }
  }
  for (let i = rows.length - 1; i >= 0; i--) {
    const card = rows[i];
    if (
      card.kind === 'tool' &&
      !card.done &&
      card.tid.startsWith('journal-') &&
      (!name || card.name === name)
    ) {
      return i;
    }
  }
  return -1;
}

function completeTool(state: ITranscript, row: IJournalRow): ITranscript {
  const p = row.payload ?? {};
  const index = findOpenCard(state.rows, str(p.tid), str(p.name));
  if (index < 0) {
    return state; // a completion without its start: nothing to pair
  }
  const card = state.rows[index] as IToolRow;
  const rows = state.rows.slice();
  rows[index] = {
    ...card,
    done: true,
    preview: str(p.preview) || card.preview,
    isError: p.is_error === true,
    duration: typeof p.duration === 'number' ? p.duration : null
  };
  return { ...state, rows };
}

/** A pending approval becomes a card with its options; its resolution completes the same card. */
function approvalEvent(state: ITranscript, row: IJournalRow): ITranscript {
  const p = row.payload ?? {};
  const id = str(p.approval_id) || `journal-${row.seq}`;
  if (p.status === 'pending') {
    const options = Array.isArray(p.options) ? p.options.map(String) : ['allow_once', 'deny'];
    return push(state, {
      kind: 'tool',
      id: `${state.prefix}:a:${row.seq}`,
      tid: id,
      name: 'approval',
      args: p.command ? { command: p.command } : null,
      preview: str(p.description),
      done: false,
      isError: false,
      duration: null,
      approval: { id, runId: str(row.run_id), options }
    });
  }
  const index = state.rows.findIndex(r => r.kind === 'tool' && r.approval?.id === id);
  if (index < 0) {
    return state;
  }
  const card = state.rows[index] as IToolRow;
  const choice = str(p.choice) || 'deny';
  const rows = state.rows.slice();
  rows[index] = {
    ...card,
    done: true,
    isError: choice !== 'allow_once',
    approval: { ...card.approval!, choice, reason: str(p.reason) }
  };
  return { ...state, rows };
}

function terminalMarker(state: ITranscript, row: IJournalRow): IMarkerRow | null {
  const p = row.payload ?? {};
  const id = `${state.prefix}:m:${row.seq}`;
  if (row.event === 'done' || row.event === 'stream_end') {
    return null;
  }
  if (row.event === 'cancel') {
    return { kind: 'marker', id, variant: 'cancel', text: CANCEL_MARKER_TEXT };
  }
  const kind = str(p.type).toLowerCase();
  if (kind.includes('interrupted')) {
    const cause = str(p.interruption_cause) || str(p.cause) || 'unknown';
    const text =
      markerTextOfPayload(p) ?? interruptedMarkerText(cause, hasOutput(state));
    return { kind: 'marker', id, variant: 'interrupted', text, cause };
  }
  if (kind.includes('cancel')) {
    return { kind: 'marker', id, variant: 'cancel', text: CANCEL_MARKER_TEXT };
  }
  const hint = str(p.hint);
  const message = str(p.message) || 'The run failed.';
  return {
    kind: 'marker',
    id,
    variant: 'error',
    text: `**Error:** ${message}${hint ? `\n\n${hint}` : ''}`
  };
}
