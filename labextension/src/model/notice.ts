/**
 * The one notice the sidebar shows above the chat. The session list, the open chat and a
 * recovered turn each have something to say, but when the server is down they all say it at
 * once; the person reads one sentence, the most important (docs/sidebar.md, "One notice"). Pure.
 */
import type { IPlainError } from '../api/plain-errors';

export type NoticeKind = 'offline' | 'error' | 'sessions' | 'recovered';

export interface INotice {
  kind: NoticeKind;
  /** One plain sentence: what happened, what to do. */
  text: string;
  /** The technical reason, for a details fold ('' for none). */
  details: string;
  /** The ✕ clears the chat's error or hides the recovery note; the others clear themselves. */
  dismiss: 'error' | 'recovered' | null;
}

export interface INoticeSources {
  /** The session list's last read failed. */
  sessions: IPlainError | null;
  /** The open chat's last action failed. */
  chat: IPlainError | null;
  /** The open session has a turn recovered after a server restart (and it was not dismissed). */
  recovered: boolean;
}

export const OFFLINE_TEXT =
  'The Jupyter server cannot be reached. Check that it is still running; this panel picks up again by itself once it is back.';

export const RECOVERED_TEXT =
  'The Jupyter server restarted while Hermes was answering. The answer so far was recovered from the run journal; the note under it says what happened.';

/** Offline first (everything else follows from it), then what the person just did, then the list, then the recovery note. */
export function pickNotice(sources: INoticeSources): INotice | null {
  const { sessions, chat } = sources;
  if (sessions?.offline || chat?.offline) {
    const details = (chat?.offline ? chat.details : sessions?.details) ?? '';
    return { kind: 'offline', text: OFFLINE_TEXT, details, dismiss: null };
  }
  if (chat) {
    return { kind: 'error', text: chat.text, details: chat.details, dismiss: 'error' };
  }
  if (sessions) {
    return { kind: 'sessions', text: sessions.text, details: sessions.details, dismiss: null };
  }
  if (sources.recovered) {
    return { kind: 'recovered', text: RECOVERED_TEXT, details: '', dismiss: 'recovered' };
  }
  return null;
}
