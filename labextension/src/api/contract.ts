/**
 * Wire types of the hermes-jupyter server (CONTRACT §3-§6, §8).
 *
 * Names are spelled here once; every other module imports them. Fields the
 * contract leaves open are optional so a server that adds fields never breaks us.
 */

/** The mime type of a hermes run output in a notebook (CONTRACT §8). */
export const RUN_MIME_TYPE = 'application/vnd.hermes.run+json';

/** Journal events (CONTRACT §4). */
export type EventName =
  | 'token'
  | 'reasoning'
  | 'interim_assistant'
  | 'tool'
  | 'tool_complete'
  | 'approval'
  | 'done'
  | 'cancel'
  | 'apperror'
  | string;

/** Events that end a run. `stream_end`/`error` may appear in foreign journals. */
export const TERMINAL_EVENTS: ReadonlySet<string> = new Set([
  'done',
  'cancel',
  'apperror',
  'stream_end',
  'error'
]);

export type TerminalState =
  | 'completed'
  | 'interrupted-by-user'
  | 'interrupted-by-crash'
  | 'errored'
  | 'tool_limit_reached';

/** One line of `runs/<sid>/<run_id>.jsonl`, as sent by the events route and the stream. */
export interface IJournalRow {
  version: number;
  event_id: string;
  seq: number;
  run_id: string;
  session_id: string;
  event: EventName;
  type: string;
  created_at: number;
  terminal: boolean;
  terminal_state: TerminalState | null;
  payload: { [key: string]: unknown };
}

/** Run status of `GET runs/{run_id}` and of the notebook run bundle. */
export type RunStatus =
  | 'running'
  | 'completed'
  | 'interrupted'
  | 'cancelled'
  | 'errored';

export const FINAL_STATUSES: ReadonlySet<string> = new Set([
  'completed',
  'interrupted',
  'cancelled',
  'errored'
]);

/** `GET runs/{run_id}`. */
export interface IRunInfo {
  run_id: string;
  session_id: string;
  status: RunStatus;
  last_seq: number;
}

/** `GET runs/{run_id}/events?after_seq=N&limit=M`. */
export interface IRunEventsPage {
  events: IJournalRow[];
  next_seq?: number;
  terminal?: boolean;
}

/** `POST sessions/{sid}/runs` (202) and, when it starts a run, retry. */
export interface IRunStarted {
  run_id: string;
  session_id: string;
}

/** The causes an interrupted marker may name (CONTRACT §5). */
export type InterruptionCause =
  | 'server_restart'
  | 'kernel_restart'
  | 'server_shutdown'
  | 'lost_worker'
  | 'unknown';

export interface IAttachment {
  name?: string;
  path?: string;
  mime_type?: string;
  size?: number;
  [key: string]: unknown;
}

/** A transcript row of a session sidecar (CONTRACT §3). */
export interface IMessageRow {
  role: 'user' | 'assistant' | 'system' | 'tool' | string;
  content: string | Array<{ type?: string; text?: string }> | null;
  timestamp?: number;
  reasoning?: string | null;
  attachments?: IAttachment[];
  _recovered?: boolean;
  _error?: boolean;
  _partial?: boolean;
  type?: string;
  interruption_cause?: InterruptionCause | string;
  _recovered_from_run_journal?: boolean;
  _recovered_stream_id?: string;
  _pending_journal_recovery?: boolean;
}

/** A tool card stored with a session; `assistant_msg_idx` points into `messages`. */
export interface IToolCallRow {
  tid?: string;
  name?: string;
  args?: { [key: string]: unknown };
  preview?: string | null;
  snippet?: string | null;
  done?: boolean;
  is_error?: boolean;
  duration?: number | null;
  assistant_msg_idx?: number;
  /** Approval cards (`name: "approval"`): how it was answered. */
  choice?: string;
  reason?: string | null;
  _run_id?: string;
  _recovered_stream_id?: string;
}

/** A compact row of `GET sessions` (newest first). */
export interface ISessionSummary {
  session_id: string;
  title?: string | null;
  created_at?: number;
  updated_at?: number;
  message_count?: number;
  backend?: string;
  model?: string | null;
  active_stream_id?: string | null;
  is_streaming?: boolean;
  notebook_path?: string | null;
}

/** `GET sessions/{sid}`: the full session. */
export interface ISession extends ISessionSummary {
  messages: IMessageRow[];
  tool_calls?: IToolCallRow[];
  pending_user_message?: string | null;
  pending_attachments?: IAttachment[];
  pending_started_at?: number | null;
}

/** `POST sessions` body. */
export interface ICreateSession {
  title?: string;
  backend?: string;
  model?: string;
  notebook_path?: string;
  cell_id?: string;
  kernel_id?: string;
}

/** `application/vnd.hermes.run+json` (CONTRACT §8). */
export interface IRunOutputPayload {
  run_id: string;
  session_id: string;
  seq: number;
  status: RunStatus | string;
}

/** True if `status` is one of the final run statuses. */
export function isFinalStatus(status: string | undefined | null): boolean {
  return !!status && FINAL_STATUSES.has(status);
}

/** True if the row ends its run. */
export function isTerminalRow(row: IJournalRow): boolean {
  return row.terminal === true || TERMINAL_EVENTS.has(row.event);
}

/** The run status a terminal row implies (CONTRACT §6 names). */
export function statusOfTerminal(row: IJournalRow): RunStatus {
  if (row.event === 'done' || row.event === 'stream_end') {
    return 'completed';
  }
  if (row.event === 'cancel') {
    return 'cancelled';
  }
  const kind = String(row.payload?.type ?? '').toLowerCase();
  if (kind.includes('cancel')) {
    return 'cancelled';
  }
  if (kind.includes('interrupted')) {
    return 'interrupted';
  }
  return 'errored';
}

/** Ids accepted by the server (CONTRACT §3). */
export const ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
