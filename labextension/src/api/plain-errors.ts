/**
 * What a failed request means to the person at the keyboard: one plain sentence
 * (what happened, what to do), with the server's own message and the HTTP code
 * kept apart for a details fold or a title attribute.
 */
import { HermesApiError } from './client';

export interface IPlainError {
  /** A sentence a data scientist understands. */
  text: string;
  /** The technical reason (server message, HTTP code), for a details fold. */
  details: string;
  /** The server could not be reached at all (no answer): the sidebar says so once, above all else. */
  offline?: boolean;
}

const BY_STATUS: { [status: number]: string } = {
  0: 'The Jupyter server cannot be reached. Check that it is still running, then try again.',
  400: 'The server did not accept this request. See the details for what it expected.',
  401: 'You are no longer signed in to this Jupyter server. Reload the page to sign in again.',
  403: 'You are no longer signed in to this Jupyter server. Reload the page to sign in again.',
  404: 'This session or run no longer exists on the server. Pick another session or start a new one.',
  409: 'Hermes is still answering in this session. Wait for the answer to finish, or press Stop first.',
  413: 'That message is too large to send. Shorten it (or attach less), then try again.',
  429: 'The server is busy with too many requests. Wait a moment, then try again.'
};

const SERVER_TROUBLE = 'The Jupyter server ran into a problem. Try again; if it keeps failing, the server log says why.';

export function plainError(error: unknown): IPlainError {
  if (error instanceof HermesApiError) {
    if (error.status === 0) {
      return { text: BY_STATUS[0], details: error.message, offline: true };
    }
    if (error.plain && error.status !== 500) {
      // the server words every refusal for a person (what happened, what to do): a linked state
      // folder (503), a damaged file (409), a person-only action (403), a full disk (507)
      return { text: error.message, details: [error.detail, `HTTP ${error.status}`].filter(Boolean).join(' · ') };
    }
    const text = BY_STATUS[error.status] ?? (error.status >= 500 ? SERVER_TROUBLE : BY_STATUS[400]);
    return { text, details: `${error.message} (HTTP ${error.status})` };
  }
  const message = error instanceof Error ? error.message : String(error);
  return { text: 'Something went wrong. Try again; the details say what.', details: message };
}

/** A live run view that lost its stream (the run itself may still be going on the server). */
export function lostStream(reason: string | null): IPlainError {
  return {
    text: 'The live view of this answer stopped updating. Open the session again to see what was saved.',
    details: reason ?? 'the run stream ended without a verdict'
  };
}
