/**
 * Journal row builders shared by the specs.
 */
import { EventName, IJournalRow, ISettledMessage, TerminalState } from '../api/contract';

/** What the journal writer records for a terminal row (tests name the tool limit in payload.type). */
function terminalState(event: string, payload: { [key: string]: unknown }): TerminalState {
  if (payload.type === 'tool_limit_reached') {
    return 'tool_limit_reached';
  }
  return event === 'done' ? 'completed' : event === 'cancel' ? 'interrupted-by-user' : 'errored';
}

export function journal(
  runId: string,
  events: Array<[string, { [key: string]: unknown }]>,
  sessionId = 'sid'
): IJournalRow[] {
  return events.map(([event, payload], index) => {
    const seq = index + 1;
    const terminal = ['done', 'cancel', 'apperror'].includes(event);
    return {
      version: 1,
      event_id: `${runId}:${seq}`,
      seq,
      run_id: runId,
      session_id: sessionId,
      event: event as EventName,
      type: event,
      created_at: 1700000000 + seq,
      terminal,
      terminal_state: terminal ? terminalState(event, payload) : null,
      payload
    };
  });
}

/** Rows of a .jsonl file; a torn last line is what a crash leaves, and is skipped like the server does. */
export function journalRows(text: string): IJournalRow[] {
  const rows: IJournalRow[] = [];
  for (const line of text.split('\n')) {
    try {
      const row = JSON.parse(line);
      if (row && typeof row.event_id === 'string') {
        rows.push(row);
      }
    } catch {
      // blank or torn
    }
  }
  return rows;
}

/** The settled message a golden fixture's `.expected.json` stands for (its transcript and bundle). */
export function settledOf(expected: Pick<ISettledMessage, 'transcript' | 'bundle'>): ISettledMessage {
  const { transcript, bundle } = expected;
  const { run_id, session_id, status } = transcript;
  return { settled: true, run_id, session_id, status, transcript, bundle };
}
