/**
 * Interrupted and cancel markers (CONTRACT §5): recognising them in a session
 * and wording them when the client must build one itself (a notebook output
 * rebuilt from a journal whose terminal row carries no marker text). The
 * wording mirrors hermes_jupyter/markers.py.
 *
 * A marker is never shown as a finished answer.
 */
import { IMessageRow } from '../api/contract';

export const INTERRUPTED_HEADLINE = '**Response interrupted.**';

/** The cancel marker, verbatim from markers.py (`CANCEL_CONTENT`). */
export const CANCEL_MARKER_TEXT =
  '**Task cancelled.**\n\n*The run was cancelled by the user before Hermes finished. ' +
  'No provider failure occurred.*';
const STOPPED =
  'The live response stream stopped before this turn finished.';

/** Cause sentences, one per `interruption_cause` (verbatim from markers.py). */
const CAUSE_SENTENCES: { [cause: string]: string } = {
  server_restart:
    'Evidence: the Jupyter server started after this turn began, so this looks like a server crash or restart.',
  kernel_restart:
    'Evidence: the notebook kernel this turn was bound to restarted or shut down, so the run was stopped.',
  server_shutdown:
    'Evidence: the Jupyter server was shut down while this turn was running and the turn did not finish within the drain timeout.',
  lost_worker:
    'Evidence: the stream was gone and no worker was running it any more, so the worker was lost without a terminal event.',
  unknown:
    'Evidence: the stream stopped, but hermes-jupyter could not classify the interruption more precisely.'
};

export const OUTCOME_RECOVERED =
  'The partial output above was recovered from the run journal, but the interrupted agent process could not continue.';
export const OUTCOME_NOTHING =
  'The user message above was preserved, but no agent output was recovered.';

/** The full marker text for a run the client settles from its journal. */
export function interruptedMarkerText(
  cause: string | undefined,
  recovered: boolean
): string {
  const sentence = CAUSE_SENTENCES[cause ?? 'unknown'] ?? CAUSE_SENTENCES.unknown;
  const outcome = recovered ? OUTCOME_RECOVERED : OUTCOME_NOTHING;
  return `${INTERRUPTED_HEADLINE}\n\n${STOPPED} ${sentence} ${outcome}`;
}

const CANCEL_PATTERN = /task cancel+ed|cancelled by user|canceled by user/i;

/** An interrupted marker row (`_error`, `type: "interrupted"`). */
export function isInterruptedMessage(row: IMessageRow): boolean {
  return row.role === 'assistant' && row._error === true && row.type === 'interrupted';
}

/** A cancel marker row. */
export function isCancelMessage(row: IMessageRow): boolean {
  if (row.role !== 'assistant' || row._error !== true) {
    return false;
  }
  if (row.type === 'cancel' || row.type === 'cancelled') {
    return true;
  }
  return typeof row.content === 'string' && CANCEL_PATTERN.test(row.content);
}

/**
 * True if a turn of this session was recovered after a server restart: a
 * recovered user row, or an interrupted marker whose cause is `server_restart`.
 */
export function wasRecoveredAfterRestart(messages: IMessageRow[]): boolean {
  return messages.some(
    row =>
      (row.role === 'user' && row._recovered === true) ||
      (isInterruptedMessage(row) && row.interruption_cause === 'server_restart')
  );
}

/** The text of an interrupted terminal payload, if it already is a marker. */
export function markerTextOfPayload(payload: {
  [key: string]: unknown;
}): string | null {
  const message = payload.message ?? payload.content;
  if (typeof message === 'string' && message.startsWith(INTERRUPTED_HEADLINE)) {
    return message;
  }
  return null;
}
