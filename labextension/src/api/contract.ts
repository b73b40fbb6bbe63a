/**
 * Wire types of the hermes-jupyter server (docs/api.md, docs/journal.md, docs/notebook.md).
 *
 * Names are spelled here once; every other module imports them. Fields the
 * contract leaves open are optional so a server that adds fields never breaks us.
 */
import type { IMarkerRow, IPlanItem, ProposalAction, ProposalStatus, TranscriptRow } from './rows';

/** The mime type of a hermes run output in a notebook (docs/notebook.md). */
export const RUN_MIME_TYPE = 'application/vnd.hermes.run+json';

/**
 * Journal event names (docs/journal.md), terminal events and states: generated from
 * the Python (`generated.ts`). `stream_end`/`error` are terminal rows foreign journals may carry.
 */
export { EVENTS, STATUS_KINDS, TERMINAL_EVENTS } from './generated';
export type { EventName, RunStatus, TerminalState } from './generated';
import type { EventName, RunStatus, TerminalState } from './generated';

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

/** `GET runs/{run_id}`; `marker` is the run's verdict marker once settled (or null). */
export interface IRunInfo {
  run_id: string;
  session_id: string;
  /** `queued`: sent while another turn ran; it has not started yet. */
  status: RunStatus | 'queued';
  last_seq: number;
  marker?: Pick<IMarkerRow, "variant" | "text" | "cause"> | null;
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
  /** The session was busy: the turn waits in its queue and starts when the running one ends. */
  queued?: boolean;
  /** The text was handed to the running turn (`mode: "steer"`); `run_id` is that turn's. */
  steered?: boolean;
}

/** How a message is sent while a turn runs: queued behind it, or handed to it (`steer`). */
export type SendMode = 'queue' | 'steer';

/** A message waiting in a session's queue (the listing row cuts `message`). */
export interface IQueuedTurn {
  run_id: string;
  message: string;
  queued_at: number;
}

/** `GET models?backend=NAME`. */
export interface IModelList {
  backend: string;
  default: string | null;
  models: Array<{ id: string; label: string }>;
  /** The backend can take a message in the middle of a turn. */
  can_steer?: boolean;
}

/** One thing an "allow always" answer allows (`GET approvals/always`). */
export interface IAllowedAlways {
  backend: string;
  pattern: string;
}

/** `POST sessions/{sid}/continue`: the new run and the run whose answer it continues. */
export interface IRunContinued extends IRunStarted {
  continues: string;
}

/** What an attachment is (docs/attachments.md). */
export type AttachmentKind = 'cell' | 'selection' | 'file' | 'variable';

/**
 * Context attached to a turn (`POST sessions/{sid}/runs` `attachments`): `text` is what the
 * model reads; the server cuts it to its caps and masks secrets before keeping it.
 */
export interface IAttachment {
  kind: AttachmentKind;
  /** What the chip and the user row show ("In [3]", "data.csv", "df"). */
  label: string;
  text: string;
  path?: string;
  cell_id?: string;
  language?: string;
  /** A cell's output sent with it (the traceback, for Ask Hermes). */
  output?: string;
}

/** A transcript row of a session sidecar (docs/journal.md). */
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
  interruption_cause?: string;
  /** The error kind a failed turn's closing row names (a cut stream, a length stop, …). */
  _error_type?: string;
  _recovered_from_run_journal?: boolean;
  _recovered_stream_id?: string;
  /** The run a live settle took this row from. */
  _run_id?: string;
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
  /** Which transcript card this is (tool when absent). */
  kind?: 'approval' | 'clarify' | 'plan' | 'proposal';
  /** Approval cards: the offered choices and how it was answered. */
  choices?: string[];
  choice?: string | null;
  reason?: string | null;
  /** Clarify cards: the answer (null: not answered). */
  answer?: string | null;
  /** Approval, clarify and proposal cards: who answered (absent or null: not said, or not yet). */
  answered_by?: unknown;
  /** Plan cards: the checklist. */
  items?: IPlanItem[];
  /** Proposal cards: the proposed cell and the server's record of the user's decision. */
  action?: ProposalAction;
  cell_id?: string | null;
  cell_type?: 'code' | 'markdown';
  source?: string;
  old_source?: string | null;
  status?: ProposalStatus;
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
  /** The kernel of the notebook the session is bound to (its runs get the notebook tools). */
  kernel_id?: string | null;
  /** What the list shows under the title (the notebook's path), from newer servers. */
  subtitle?: string | null;
  /** Messages waiting for the running turn to end, oldest first. */
  queued?: IQueuedTurn[];
  queued_count?: number;
}

/** `GET sessions/{sid}`: the full session. */
/**
 * One settled turn as the session stores it (docs/transcript.md, "Stored turns"): the user's row (none for
 * a continuation) and the transcript rows the server's fold made of its run, each with its `kind`.
 */
export interface IStoredTurn {
  run_id: string;
  status: RunStatus;
  rows: TranscriptRow[];
  user?: { id: string; text: string; attachments?: IAttachment[]; recovered?: boolean } | null;
  /** The run this turn continues, if it is a continuation. */
  continues?: string | null;
}

export interface ISession extends ISessionSummary {
  /** The settled turns, oldest first: what the sidebar shows. */
  turns?: IStoredTurn[];
  messages: IMessageRow[];
  tool_calls?: IToolCallRow[];
  pending_user_message?: string | null;
  pending_attachments?: IAttachment[];
  /** The user's decision on each proposed cell, by proposal row id. */
  proposal_decisions?: { [rowId: string]: ProposalStatus };
  pending_started_at?: number | null;
  /** The run the pending turn continues (`POST sessions/{sid}/continue`). */
  pending_continues?: string | null;
}

/** `POST sessions` body. */
export interface ICreateSession {
  title?: string;
  backend?: string;
  model?: string;
  notebook_path?: string;
  cell_id?: string;
  kernel_id?: string;
  /** Newer servers: create the session and start its first turn in one call (answer carries `run_id`). */
  message?: string;
}

/** `application/vnd.hermes.run+json` (docs/notebook.md). */
export interface IRunOutputPayload {
  run_id: string;
  session_id: string;
  seq: number;
  status: RunStatus | string;
  /** On a continuation: the run it continues (its bundle then shows the whole answer). */
  continues?: string;
}

/** A notebook output bundle: mime type → data. */
export type MimeBundle = { [mime: string]: unknown };

/** The run transcript the server folds (docs: transcript rows); the TS live fold yields the same rows. */
export interface ITranscriptJSON {
  run_id: string;
  session_id: string;
  status: RunStatus;
  last_seq: number;
  rows: TranscriptRow[];
}

/**
 * The last message of a run stream: the server's verdict. Journal lines are
 * told apart by their `event_id`; this one has `settled: true`.
 */
export interface ISettledMessage {
  settled: true;
  run_id: string;
  session_id: string;
  status: RunStatus;
  transcript: ITranscriptJSON;
  bundle: MimeBundle;
  /** The stored turn's user row (null for a continuation); absent from servers that do not store turns. */
  user?: IStoredTurn['user'];
}

/**
 * The first message of a stream asked with `snapshot=1` while its run is live (docs/api.md, "Joining a run in one message"):
 * the rows folded up to `last_seq` (the open text segment apart, untrimmed, so the tokens after it join it);
 * journal rows after `last_seq` follow.
 */
export interface ISnapshotMessage {
  type: 'snapshot';
  run_id: string;
  session_id: string;
  last_seq: number;
  /** The closed rows, in display order. */
  rows: TranscriptRow[];
  /** The text segment still receiving tokens: row ids `<run>:a:<n>` and `<run>:r:<n>`. */
  open: { n: number; text: string; reasoning: string };
  /** The note of each wait for the model, by `wait_id`. */
  waits: { [waitId: string]: string };
}

/** True if `status` is a final run status (anything but running). */
export function isFinalStatus(status: string | undefined | null): boolean {
  return !!status && status !== 'running' && status !== 'queued';
}

/** Ids accepted by the server (docs/journal.md). */
export const ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
