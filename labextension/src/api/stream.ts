/**
 * RunStream: the live journal of one run over `WS runs/{run_id}/stream`.
 *
 * Invariant: rows are emitted once each, in seq order, with no gap. The stream
 * keeps a cursor (the last seq emitted); after a drop it reconnects with
 * `after_seq=cursor`, drops any row at or below the cursor, and treats a row
 * past `cursor + 1` as a gap to re-read. Journal lines have an `event_id`; the
 * last message of a run has `settled: true` and is the server's verdict (so
 * nobody polls to learn that a run settled). Anything else is a heartbeat.
 *
 * With `snapshot`, the stream asks the server for the run so far in one message
 * instead of one per journal row: a live run's `snapshot` (its folded rows up to a
 * seq, which becomes the cursor), an ended run's settled message alone. A reconnect
 * missing only a few rows gets those rows instead.
 */
import { IDisposable } from '@lumino/disposable';
import { ISignal, Signal } from '@lumino/signaling';

import { HermesApiError, HermesClient } from './client';
import { IJournalRow, ISettledMessage, ISnapshotMessage } from './contract';

export type RunStreamState =
  | 'idle'
  | 'connecting'
  | 'open'
  | 'reconnecting'
  | 'ended'
  | 'failed';

export interface IRunStreamOptions {
  client: HermesClient;
  runId: string;
  /** Resume after this seq (0 replays the whole run). */
  afterSeq?: number;
  /** Ask for the run so far as one snapshot message rather than its rows (default false). */
  snapshot?: boolean;
  /** Silence (no row, no heartbeat) after which the socket is recycled, in ms. */
  idleTimeoutMs?: number;
}

/** Reconnect delays in ms; the last one repeats. */
const BACKOFF_MS = [500, 1000, 2000, 4000, 8000, 15000];
/** Default idle timeout: two missed server heartbeats (the server beats under 30 s). */
const DEFAULT_IDLE_TIMEOUT_MS = 65000;

export class RunStream implements IDisposable {
  constructor(options: IRunStreamOptions) {
    this._client = options.client;
    this.runId = options.runId;
    this._cursor = options.afterSeq ?? 0;
    this._idleTimeoutMs = options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
    this._snapshot = options.snapshot ?? false;
  }

  readonly runId: string;

  /** Each journal row, once, in seq order. */
  get rowReceived(): ISignal<this, IJournalRow> {
    return this._rowReceived;
  }

  /** The run up to a seq in one message (asked with `snapshot`): rows after it follow. */
  get snapshotReceived(): ISignal<this, ISnapshotMessage> {
    return this._snapshotReceived;
  }

  /** The server's verdict: the last message of the run, after its terminal row. */
  get settled(): ISignal<this, ISettledMessage> {
    return this._settled;
  }

  get stateChanged(): ISignal<this, RunStreamState> {
    return this._stateChanged;
  }

  get state(): RunStreamState {
    return this._state;
  }

  /** The last seq emitted. */
  get cursor(): number {
    return this._cursor;
  }

  /** The server does not know this run (404). */
  get notFound(): boolean {
    return this._notFound;
  }

  /** The reason of a `failed` state. */
  get error(): string | null {
    return this._error;
  }

  get isDisposed(): boolean {
    return this._disposed;
  }

  /** Open the socket; a no-op once started. */
  start(): void {
    if (this._state !== 'idle' || this._disposed) {
      return;
    }
    this._open('connecting');
  }

  dispose(): void {
    if (this._disposed) {
      return;
    }
    this._disposed = true;
    this._teardown();
    Signal.clearData(this);
  }

  private _open(state: RunStreamState): void {
    this._setState(state);
    // A reconnect asks too: the server sends the rows after the cursor when only a few are missing.
    const url = this._client.streamUrl(this.runId, this._cursor, this._snapshot);
    const WS = this._client.serverSettings.WebSocket;
    const ws = new WS(url);
    this._ws = ws;
    ws.onopen = () => {
      if (this._ws === ws) {
        this._setState('open');
        this._touch();
      }
    };
    ws.onmessage = event => {
      if (this._ws === ws) {
        this._onMessage(event.data);
      }
    };
    ws.onclose = event => {
      if (this._ws === ws) {
        this._ws = null;
        // 1000: the server closed a finished run's stream (one without a verdict message).
        event.code === 1000 ? this._finish('ended') : this._onDrop();
      }
    };
    ws.onerror = () => {
      // onclose follows; reconnecting happens there.
    };
    this._touch();
  }

  private _onMessage(data: unknown): void {
    this._touch();
    let message: { [key: string]: unknown } | null = null;
    try {
      message = typeof data === 'string' ? JSON.parse(data) : null;
    } catch {
      return;
    }
    if (!message || typeof message !== 'object') {
      return;
    }
    if (message.settled === true) {
      this._settled.emit(message as unknown as ISettledMessage);
      this._finish('ended');
      return;
    }
    if (message.type === 'snapshot') {
      this._onSnapshot(message as unknown as ISnapshotMessage);
      return;
    }
    const row = message as unknown as IJournalRow;
    if (typeof row.event_id !== 'string' || !Number.isInteger(row.seq) || row.seq <= this._cursor) {
      return; // a heartbeat, or a row already seen before a reconnect
    }
    if (row.seq > this._cursor + 1) {
      // A gap: drop this socket and resume from the cursor.
      this._recycle();
      return;
    }
    this._attempt = 0;
    this._cursor = row.seq;
    this._rowReceived.emit(row);
  }

  /** The run so far: its seq becomes the cursor (a snapshot behind the cursor has nothing new). */
  private _onSnapshot(snapshot: ISnapshotMessage): void {
    if (!Number.isInteger(snapshot.last_seq) || snapshot.last_seq < this._cursor || !Array.isArray(snapshot.rows)) {
      return;
    }
    this._attempt = 0;
    this._cursor = snapshot.last_seq;
    this._snapshotReceived.emit(snapshot);
  }

  /** The socket dropped before the verdict: probe the run, then resume. */
  private _onDrop(): void {
    if (this._disposed || this._isDone()) {
      return;
    }
    this._clearIdle();
    this._setState('reconnecting');
    const delay = BACKOFF_MS[Math.min(this._attempt, BACKOFF_MS.length - 1)];
    this._attempt += 1;
    this._retryTimer = window.setTimeout(() => {
      this._retryTimer = 0;
      void this._resume();
    }, delay);
  }

  private async _resume(): Promise<void> {
    if (this._disposed || this._isDone()) {
      return;
    }
    try {
      // Only to learn whether the run still exists; the stream itself says how it ended.
      await this._client.getRun(this.runId);
      if (this._disposed || this._isDone()) {
        return;
      }
      this._open('reconnecting');
    } catch (error) {
      if (this._disposed) {
        return;
      }
      if (error instanceof HermesApiError && error.status >= 400) {
        if (error.status === 404 || error.status === 403) {
          this._error = error.message;
          this._notFound = error.status === 404;
          this._finish('failed');
          return;
        }
      }
      this._onDrop(); // server unreachable (restarting?): keep trying
    }
  }

  private _recycle(): void {
    const ws = this._ws;
    this._ws = null;
    if (ws) {
      ws.onopen = ws.onmessage = ws.onclose = ws.onerror = null;
      ws.close();
    }
    this._onDrop();
  }

  private _touch(): void {
    this._clearIdle();
    this._idleTimer = window.setTimeout(
      () => this._recycle(),
      this._idleTimeoutMs
    );
  }

  private _finish(state: 'ended' | 'failed'): void {
    this._teardown();
    this._setState(state);
  }

  private _teardown(): void {
    this._clearIdle();
    if (this._retryTimer) {
      window.clearTimeout(this._retryTimer);
      this._retryTimer = 0;
    }
    const ws = this._ws;
    this._ws = null;
    if (ws) {
      ws.onopen = ws.onmessage = ws.onclose = ws.onerror = null;
      ws.close();
    }
  }

  private _clearIdle(): void {
    if (this._idleTimer) {
      window.clearTimeout(this._idleTimer);
      this._idleTimer = 0;
    }
  }

  private _isDone(): boolean {
    return this._state === 'ended' || this._state === 'failed';
  }

  private _setState(state: RunStreamState): void {
    if (this._state !== state) {
      this._state = state;
      this._stateChanged.emit(state);
    }
  }

  private _client: HermesClient;
  private _cursor: number;
  private _idleTimeoutMs: number;
  private _snapshot: boolean;
  private _ws: WebSocket | null = null;
  private _state: RunStreamState = 'idle';
  private _error: string | null = null;
  private _notFound = false;
  private _attempt = 0;
  private _retryTimer = 0;
  private _idleTimer = 0;
  private _disposed = false;
  private _rowReceived = new Signal<this, IJournalRow>(this);
  private _snapshotReceived = new Signal<this, ISnapshotMessage>(this);
  private _settled = new Signal<this, ISettledMessage>(this);
  private _stateChanged = new Signal<this, RunStreamState>(this);
}
