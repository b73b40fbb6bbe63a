/**
 * The session list read page by page, so a server with thousands of sessions
 * answers the sidebar quickly. `GET sessions?limit=N&before=CURSOR` answers
 * `{sessions, next}`; a server without pages answers the whole list, which is
 * then read as the one and last page.
 */
import { readSessionPage } from '../api/client';
import { ISessionSummary } from '../api/contract';

/** How many sessions a page asks for. */
export const SESSION_PAGE_SIZE = 50;

/** Reads one page's raw answer; `before` is null for the first (newest) page. */
export type SessionPageRequest = (
  limit: number,
  before: string | null
) => Promise<unknown>;

/**
 * The first page, refreshed by polling, plus the older pages the user asked
 * for. A session on the first page wins over its older copy (it moved up).
 */
export class SessionPages {
  constructor(
    private readonly _request: SessionPageRequest,
    readonly pageSize = SESSION_PAGE_SIZE
  ) {}

  /** The first page, then the older sessions not on it (unsorted). */
  get sessions(): ISessionSummary[] {
    const onFirst = new Set(this._first.map(s => s.session_id));
    return [...this._first, ...this._older.filter(s => !onFirst.has(s.session_id))];
  }

  get hasOlder(): boolean {
    return this._next !== null;
  }

  get loadingOlder(): boolean {
    return this._loadingOlder;
  }

  /**
   * Reads the first page again. Once older pages were read they are kept, and
   * so is a session that slid off the first page (another moved up), else it
   * would fall between the pages until a reload.
   */
  async loadFirst(): Promise<ISessionSummary[]> {
    const page = readSessionPage(await this._request(this.pageSize, null));
    if (this._older.length === 0) {
      this._next = page.next;
    } else {
      const onFirst = new Set(page.sessions.map(s => s.session_id));
      this._older = [...this._first.filter(s => !onFirst.has(s.session_id)), ...this._older];
    }
    this._first = page.sessions;
    return this.sessions;
  }

  /** Reads the next older page, if there is one and none is being read. */
  async loadOlder(): Promise<ISessionSummary[]> {
    const cursor = this._next;
    if (cursor === null || this._loadingOlder) {
      return this.sessions;
    }
    this._loadingOlder = true;
    try {
      const page = readSessionPage(await this._request(this.pageSize, cursor));
      this._older = [...this._older, ...page.sessions];
      this._next = page.next;
    } finally {
      this._loadingOlder = false;
    }
    return this.sessions;
  }

  /** Adds (or moves up) a session the user just created. */
  add(session: ISessionSummary): void {
    this._first = [session, ...this._first.filter(s => s.session_id !== session.session_id)];
  }

  /** Changes a session in place (a rename), on whichever page holds it. */
  patch(sessionId: string, change: Partial<ISessionSummary>): void {
    const apply = (s: ISessionSummary) =>
      s.session_id === sessionId ? { ...s, ...change, session_id: sessionId } : s;
    this._first = this._first.map(apply);
    this._older = this._older.map(apply);
  }

  /** Drops a session the user deleted, from whichever page holds it. */
  forget(sessionId: string): void {
    this._first = this._first.filter(s => s.session_id !== sessionId);
    this._older = this._older.filter(s => s.session_id !== sessionId);
  }

  private _first: ISessionSummary[] = [];
  private _older: ISessionSummary[] = [];
  private _next: string | null = null;
  private _loadingOlder = false;
}
