/**
 * SessionsModel: the session list of the sidebar (newest first) and which
 * session is selected. The selection survives a page reload (localStorage), so
 * a reload mid-stream re-attaches to the same session's live run.
 */
import { IDisposable } from '@lumino/disposable';
import { IPoll, Poll } from '@lumino/polling';
import { ISignal, Signal } from '@lumino/signaling';

import { HermesClient } from '../api/client';
import { IPlainError, plainError } from '../api/plain-errors';
import { IAttachment, ICreateSession, ISessionSummary } from '../api/contract';
import { SessionPages } from './session-pages';

const SELECTED_KEY = 'hermes-jupyter:selected-session';
/** How often the list is refreshed while the page is visible, in ms. */
const REFRESH_INTERVAL_MS = 10000;
/** The refresh interval while some session is streaming, in ms. */
const STREAMING_INTERVAL_MS = 3000;
/** The refresh interval while the sidebar is visible (a run another client starts shows up soon), in ms. */
const WATCH_INTERVAL_MS = 2000;
/** The longest wait between two failed refreshes: while the sidebar is visible, and while it is not, in ms. */
const WATCH_BACKOFF_MAX_MS = 5000;
const BACKOFF_MAX_MS = 60000;

export function isStreaming(session: ISessionSummary): boolean {
  return session.is_streaming === true || !!session.active_stream_id;
}

export function sessionTitle(session: ISessionSummary): string {
  return session.title?.trim() || 'Untitled session';
}

/** The line under a session's title: the server's subtitle, else its notebook's path. */
export function sessionSubtitle(session: ISessionSummary): string {
  return session.subtitle?.trim() || session.notebook_path?.trim() || '';
}

export interface ISessionGroup {
  /** The notebook's path, or '' for sessions that belong to no notebook. */
  notebook: string;
  sessions: ISessionSummary[];
}

/**
 * Sessions grouped by notebook, each group keeping the list's order (newest
 * first) and groups ordered by their newest session.
 */
export function groupByNotebook(sessions: readonly ISessionSummary[]): ISessionGroup[] {
  const groups = new Map<string, ISessionGroup>();
  for (const session of sessions) {
    const notebook = sessionSubtitle(session);
    const group = groups.get(notebook) ?? { notebook, sessions: [] };
    group.sessions.push(session);
    groups.set(notebook, group);
  }
  return [...groups.values()];
}

/** Newest first: by `updated_at`, then `created_at`. */
export function sortSessions(sessions: ISessionSummary[]): ISessionSummary[] {
  const key = (s: ISessionSummary) => s.updated_at ?? s.created_at ?? 0;
  return sessions.slice().sort((a, b) => key(b) - key(a));
}

export class SessionsModel implements IDisposable {
  constructor(readonly client: HermesClient) {
    this._selectedId = readSelected();
    this._pages = new SessionPages((limit, before) =>
      client.listSessionsPage(limit, before)
    );
    this._poll = new Poll({
      factory: () => this.refresh(),
      frequency: { interval: REFRESH_INTERVAL_MS, backoff: true, max: BACKOFF_MAX_MS },
      standby: 'when-hidden'
    });
    // The server is back (any request answered again), the network is back, or the page is
    // shown again: read the list now, which also ends the back-off (docs/sidebar.md).
    client.reconnected.connect(this._onBack, this);
    this._listen = typeof window !== 'undefined' && typeof document !== 'undefined';
    if (this._listen) {
      window.addEventListener('online', this._onBack);
      document.addEventListener('visibilitychange', this._onVisible);
    }
  }

  get changed(): ISignal<this, void> {
    return this._changed;
  }

  /** Emitted when another session is selected (or none). */
  get selectionChanged(): ISignal<this, string | null> {
    return this._selectionChanged;
  }

  get sessions(): readonly ISessionSummary[] {
    return this._sessions;
  }

  get selectedId(): string | null {
    return this._selectedId;
  }

  /** True while older sessions remain to be read ("Show older sessions"). */
  get hasOlder(): boolean {
    return this._pages.hasOlder;
  }

  get loadingOlder(): boolean {
    return this._pages.loadingOlder;
  }

  get loaded(): boolean {
    return this._loaded;
  }

  get error(): IPlainError | null {
    return this._error;
  }

  get isDisposed(): boolean {
    return this._disposed;
  }

  /** The refresh poll's last tick: `refreshed` when a read was asked for now (tests read it). */
  get pollState(): IPoll.State<void, Error, IPoll.Phase<never>> {
    return this._poll.state;
  }

  async refresh(): Promise<void> {
    this._reading = true;
    try {
      this._sessions = sortSessions(await this._pages.loadFirst());
      this._error = null;
      // Poll faster while a run streams, so its badge clears soon after it ends.
      this._tune();
      if (
        this._selectedId &&
        !this._sessions.some(s => s.session_id === this._selectedId)
      ) {
        this.select(this._sessions[0]?.session_id ?? null);
      }
    } catch (error) {
      this._error = plainError(error);
      throw error; // lets the poll back off
    } finally {
      this._reading = false;
      this._loaded = true;
      this._changed.emit();
    }
  }

  /** The sidebar is shown (poll faster: runs other clients start appear soon) or hidden. */
  setWatching(watching: boolean): void {
    if (this._watching !== watching) {
      this._watching = watching;
      this._tune();
      if (watching) {
        this.refreshSoon();
      }
    }
  }

  private _tune(): void {
    const interval = this._watching
      ? WATCH_INTERVAL_MS
      : this._sessions.some(isStreaming)
        ? STREAMING_INTERVAL_MS
        : REFRESH_INTERVAL_MS;
    // While the list is on screen a server that is down is asked no more often than a healthy one
    // is, so it is seen back within seconds; hidden, the poll backs off to a minute.
    const max = this._watching ? WATCH_BACKOFF_MAX_MS : BACKOFF_MAX_MS;
    const frequency = this._poll.frequency;
    if (frequency.interval !== interval || frequency.max !== max) {
      this._poll.frequency = { ...frequency, interval, max };
    }
  }

  /** Read the list now when it failed last time (the server or the network is back). */
  private _onBack = (): void => {
    if (this._error && !this._reading && !this._disposed) {
      this.refreshSoon();
    }
  };

  private _onVisible = (): void => {
    if (document.visibilityState === 'visible') {
      this._onBack();
    }
  };

  /** Reads the next page of older sessions, reporting failures through `error`. */
  async showOlder(): Promise<void> {
    const reading = this._pages.loadOlder();
    this._changed.emit(); // shows that a page is being read
    try {
      this._sessions = sortSessions(await reading);
      this._error = null;
    } catch (error) {
      this._error = plainError(error);
    } finally {
      this._changed.emit();
    }
  }

  /** Refresh now, reporting failures through `error` only. */
  refreshSoon(): void {
    void this._poll.refresh();
  }

  select(sessionId: string | null): void {
    if (sessionId === this._selectedId) {
      return;
    }
    this._selectedId = sessionId;
    writeSelected(sessionId);
    this._selectionChanged.emit(sessionId);
    this._changed.emit();
  }

  /** A new session, bound to `binding`'s notebook when given (the notebook in front: its context by default). */
  async create(title?: string, binding: ICreateSession = {}): Promise<string> {
    const session = await this.client.createSession(title ? { title, ...binding } : { ...binding });
    this._pages.add(session);
    this._sessions = sortSessions(this._pages.sessions);
    this.select(session.session_id);
    this._changed.emit();
    this.refreshSoon();
    return session.session_id;
  }

  /**
   * A new session with its first turn started: one call on servers that take
   * `message` in `POST sessions`; on older ones, create then start, and delete
   * the session again if the turn cannot start (a failed send leaves nothing behind).
   */
  async createWithFirstTurn(
    message: string,
    attachments: IAttachment[] = [],
    binding: ICreateSession = {}
  ): Promise<{ sessionId: string; runId: string }> {
    // The one-step create takes no attachments: with some, create first, then start the turn.
    const session = await this.client.createSession(attachments.length ? { ...binding } : { message, ...binding });
    let runId = typeof session.run_id === 'string' ? session.run_id : '';
    if (!runId) {
      try {
        runId = (await this.client.startRun(session.session_id, message, 'queue', attachments)).run_id;
      } catch (error) {
        await this.client.deleteSession(session.session_id).catch(() => undefined);
        throw error;
      }
    }
    this._pages.add(session);
    this._sessions = sortSessions(this._pages.sessions);
    this.select(session.session_id);
    this._changed.emit();
    this.refreshSoon();
    return { sessionId: session.session_id, runId };
  }

  async rename(sessionId: string, title: string): Promise<void> {
    await this.client.renameSession(sessionId, title);
    this._pages.patch(sessionId, { title });
    this._sessions = sortSessions(this._pages.sessions);
    this._changed.emit();
    this.refreshSoon();
  }

  /** Bind a session to a notebook and its kernel: from its next run on, every run gets the notebook tools. */
  async bind(sessionId: string, notebookPath: string | null, kernelId: string | null): Promise<void> {
    const row = await this.client.bindSession(sessionId, notebookPath, kernelId);
    this._pages.patch(sessionId, row);
    this._sessions = sortSessions(this._pages.sessions);
    this._changed.emit();
  }

  async remove(sessionId: string): Promise<void> {
    await this.client.deleteSession(sessionId);
    this._pages.forget(sessionId);
    this._sessions = sortSessions(this._pages.sessions);
    if (this._selectedId === sessionId) {
      this.select(this._sessions[0]?.session_id ?? null);
    }
    this._changed.emit();
  }

  dispose(): void {
    if (this._disposed) {
      return;
    }
    this._disposed = true;
    this._poll.dispose();
    this.client.reconnected.disconnect(this._onBack, this);
    if (this._listen) {
      window.removeEventListener('online', this._onBack);
      document.removeEventListener('visibilitychange', this._onVisible);
    }
    Signal.clearData(this);
  }

  private _sessions: ISessionSummary[] = [];
  private _pages: SessionPages;
  private _selectedId: string | null;
  private _loaded = false;
  private _watching = false;
  private _error: IPlainError | null = null;
  private _disposed = false;
  private _listen: boolean;
  private _reading = false;
  private _poll: Poll;
  private _changed = new Signal<this, void>(this);
  private _selectionChanged = new Signal<this, string | null>(this);
}

function readSelected(): string | null {
  try {
    return window.localStorage.getItem(SELECTED_KEY);
  } catch {
    return null;
  }
}

function writeSelected(sessionId: string | null): void {
  try {
    if (sessionId) {
      window.localStorage.setItem(SELECTED_KEY, sessionId);
    } else {
      window.localStorage.removeItem(SELECTED_KEY);
    }
  } catch {
    // Storage may be disabled; the selection then lasts for this page only.
  }
}
