/**
 * Settled session → display rows. Pure.
 *
 * Messages map one to one (markers recognised by their flags, never shown as
 * answers); each stored tool card follows the assistant message it belongs to
 * (`assistant_msg_idx`); cards without an index close the transcript.
 */
import { IMessageRow, ISession, IToolCallRow } from '../api/contract';
import { isCancelMessage, isInterruptedMessage } from './markers';
import { DisplayRow, IToolRow, contentText } from './rows';

export function sessionRows(session: ISession): DisplayRow[] {
  const messages = session.messages ?? [];
  const cardsByIndex = new Map<number, IToolCallRow[]>();
  const orphanCards: IToolCallRow[] = [];
  for (const card of session.tool_calls ?? []) {
    const idx = card.assistant_msg_idx;
    if (typeof idx === 'number' && idx >= 0 && idx < messages.length) {
      const list = cardsByIndex.get(idx) ?? [];
      list.push(card);
      cardsByIndex.set(idx, list);
    } else {
      orphanCards.push(card);
    }
  }
  const rows: DisplayRow[] = [];
  const prefix = `s:${session.session_id}`;
  messages.forEach((message, index) => {
    const row = messageRow(message, `${prefix}:${index}`);
    if (row) {
      rows.push(row);
    }
    (cardsByIndex.get(index) ?? []).forEach((card, n) =>
      rows.push(toolCardRow(card, `${prefix}:${index}:t${n}`))
    );
  });
  orphanCards.forEach((card, n) => rows.push(toolCardRow(card, `${prefix}:t${n}`)));
  return rows;
}

export function messageRow(message: IMessageRow, id: string): DisplayRow | null {
  const text = contentText(message.content);
  if (message.role === 'user') {
    return {
      kind: 'user',
      id,
      text,
      attachments: message.attachments,
      recovered: message._recovered === true
    };
  }
  if (message.role !== 'assistant') {
    return null; // system and tool-result rows are model context, not transcript
  }
  if (isInterruptedMessage(message)) {
    return {
      kind: 'marker',
      id,
      variant: 'interrupted',
      text,
      cause: message.interruption_cause,
      pendingRetry: message._pending_journal_recovery === true
    };
  }
  if (isCancelMessage(message)) {
    return { kind: 'marker', id, variant: 'cancel', text };
  }
  if (message._error === true) {
    return { kind: 'marker', id, variant: 'error', text };
  }
  const reasoning = typeof message.reasoning === 'string' ? message.reasoning : '';
  if (!text.trim() && !reasoning.trim()) {
    return null; // an empty anchor of tool cards
  }
  return {
    kind: 'assistant',
    id,
    text,
    reasoning,
    partial: message._partial === true,
    recovered: message._recovered_from_run_journal === true
  };
}

function toolCardRow(card: IToolCallRow, id: string): IToolRow {
  const row: IToolRow = {
    kind: 'tool',
    id,
    tid: card.tid ?? id,
    name: card.name || 'tool',
    args: card.args ?? null,
    preview: card.preview || card.snippet || '',
    done: card.done !== false,
    isError: card.is_error === true,
    duration: typeof card.duration === 'number' ? card.duration : null
  };
  if (card.name === 'approval') {
    // A settled approval: show how it was answered (a settled turn never waits for one).
    row.approval = {
      id: card.tid ?? id,
      runId: card._run_id ?? card._recovered_stream_id ?? '',
      options: [],
      choice: card.choice ?? 'deny',
      reason: card.reason ?? undefined
    };
  }
  return row;
}
