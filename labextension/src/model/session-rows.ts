/**
 * Settled session → display rows (the transcript row kinds, plus user rows). Pure.
 *
 * Messages map in order (a marker is an `_error` row, never an answer); each
 * stored card follows the assistant message it belongs to
 * (`assistant_msg_idx`); cards without an index close the transcript.
 */
import { IMessageRow, ISession, IToolCallRow } from '../api/contract';
import { DisplayRow, MarkerVariant, TranscriptRow, contentText } from '../api/rows';
import { answeredBy } from './fold-rows';

/** The run a stored reply or card came from, if the server tagged it. */
function runOf(tags: { _run_id?: string; _recovered_stream_id?: string }): string | undefined {
  return tags._run_id ?? tags._recovered_stream_id;
}

/**
 * `verdicts` holds the server's settled rows of runs this view saw end: a run's
 * stored replies and cards are shown as those rows instead (with its plan,
 * usage and notes, which a session does not store), once, where its first reply was.
 */
export function sessionRows(
  session: ISession,
  verdicts: ReadonlyMap<string, readonly TranscriptRow[]> = new Map()
): DisplayRow[] {
  const messages = session.messages ?? [];
  const cardsByIndex = new Map<number, IToolCallRow[]>();
  const orphanCards: IToolCallRow[] = [];
  const cards = (session.tool_calls ?? []).filter(card => !verdicts.has(runOf(card) ?? ''));
  for (const card of cards) {
    const idx = card.assistant_msg_idx;
    if (typeof idx === 'number' && idx >= 0 && idx < messages.length) {
      cardsByIndex.set(idx, [...(cardsByIndex.get(idx) ?? []), card]);
    } else {
      orphanCards.push(card);
    }
  }
  const rows: DisplayRow[] = [];
  const prefix = `s:${session.session_id}`;
  const shown = new Set<string>();
  messages.forEach((message, index) => {
    const run = message.role === 'assistant' ? runOf(message) : undefined;
    const verdict = run ? verdicts.get(run) : undefined;
    if (run && verdict) {
      if (!shown.has(run)) {
        shown.add(run);
        rows.push(...taggedAsStored(verdict, messages.filter(m => m.role === 'assistant' && runOf(m) === run)));
      }
    } else {
      rows.push(...messageRows(message, `${prefix}:${index}`));
    }
    (cardsByIndex.get(index) ?? []).forEach((card, n) => rows.push(cardRow(card, `${prefix}:${index}:c${n}`)));
  });
  orphanCards.forEach((card, n) => rows.push(cardRow(card, `${prefix}:c${n}`)));
  return rows;
}

/** The server's rows of a run, its replies tagged as the stored ones are (partial, recovered). */
function taggedAsStored(verdict: readonly TranscriptRow[], stored: IMessageRow[]): DisplayRow[] {
  const partial = stored.some(m => m._partial === true);
  const recovered = stored.some(m => m._recovered_from_run_journal === true);
  if (!partial && !recovered) {
    return [...verdict];
  }
  return verdict.map(row => (row.kind === 'assistant' ? { ...row, partial, recovered } : row));
}

/** True if a turn in these rows was recovered after a server restart (the sidebar's banner). */
export function recoveredAfterRestart(rows: readonly DisplayRow[]): boolean {
  return rows.some(
    row =>
      (row.kind === 'user' && row.recovered === true) ||
      (row.kind === 'marker' && row.cause === 'server_restart')
  );
}

function markerVariant(type: string | undefined): MarkerVariant {
  if (type === 'interrupted') {
    return 'interrupted';
  }
  return type === 'cancelled' || type === 'cancel' ? 'cancelled' : 'error';
}

export function messageRows(message: IMessageRow, id: string): DisplayRow[] {
  const text = contentText(message.content).trim();
  if (message.role === 'user') {
    const recovered = message._recovered === true;
    return [{ kind: 'user', id, text, attachments: message.attachments, recovered }];
  }
  if (message.role !== 'assistant') {
    return []; // system and tool-result rows are model context, not transcript
  }
  if (message._error === true) {
    const cause = message.interruption_cause ?? message._error_type ?? null;
    return [{ kind: 'marker', id, variant: markerVariant(message.type), text, cause }];
  }
  const rows: DisplayRow[] = [];
  const reasoning = typeof message.reasoning === 'string' ? message.reasoning.trim() : '';
  if (reasoning) {
    rows.push({ kind: 'reasoning', id: `${id}:r`, text: reasoning });
  }
  if (text) {
    const partial = message._partial === true;
    const recovered = message._recovered_from_run_journal === true;
    rows.push({ kind: 'assistant', id, text, partial, recovered });
  }
  return rows;
}

/** A stored card as its transcript row (a settled turn never waits for an answer). */
function cardRow(card: IToolCallRow, id: string): TranscriptRow {
  const tid = card.tid ?? id;
  const resolved = card.done !== false ? 'resolved' : 'pending';
  const answered_by = answeredBy(card.answered_by);
  if (card.kind === 'proposal') {
    return {
      kind: 'proposal',
      id: `${runOf(card) ?? id}:proposal:${tid}`,
      proposal_id: tid,
      action: card.action ?? 'insert_end',
      cell_id: card.cell_id ?? null,
      cell_type: card.cell_type === 'markdown' ? 'markdown' : 'code',
      source: card.source ?? '',
      old_source: card.old_source ?? null,
      status: card.status ?? 'pending',
      answered_by
    };
  }
  if (card.kind === 'plan') {
    return { kind: 'plan', id, items: card.items ?? [] };
  }
  if (card.kind === 'clarify') {
    const question = card.preview ?? '';
    const answer = card.answer ?? null;
    const reason = card.reason ?? null;
    return { kind: 'clarify', id, clarify_id: tid, question, choices: card.choices ?? [], status: resolved, answer, reason, answered_by };
  }
  if (card.kind === 'approval' || card.name === 'approval') {
    const command = typeof card.args?.command === 'string' ? card.args.command : null;
    return {
      kind: 'approval',
      id,
      approval_id: tid,
      description: card.preview ?? null,
      command,
      choices: card.choices ?? [],
      status: resolved,
      choice: card.choice ?? null,
      reason: card.reason ?? null,
      answered_by
    };
  }
  return {
    kind: 'tool',
    id,
    tid,
    name: card.name || 'tool',
    args: card.args ?? null,
    preview: card.preview ?? card.snippet ?? null,
    status: card.done === false ? 'running' : card.is_error === true ? 'error' : 'done',
    duration_s: typeof card.duration === 'number' ? card.duration : null
  };
}
