/**
 * RunFollower: one run's transcript as the server folds it, kept live.
 *
 * It attaches a RunStream that starts with the run so far in one message (a
 * snapshot of the server's fold for a live run, the settled message alone for an
 * ended one), then live rows; the settled message is the verdict (final rows,
 * status and the cell bundle). Folding ignores any seq already seen, so a
 * reconnect cannot duplicate text.
 */
import { IDisposable } from '@lumino/disposable';
import { ISignal, Signal } from '@lumino/signaling';

import { HermesApiError, HermesClient } from '../api/client';
import { MimeBundle, RunStatus } from '../api/contract';
import { RunStream, RunStreamState } from '../api/stream';
import type { ICardActions } from '../components/cards/card-actions';
import { LiveTranscript } from './transcript';

/** Milliseconds between two looks at a queued run (has it started?). */
const QUEUED_POLL_MS = 500;

/** `queued`: the run waits in its session's queue (no journal yet); it streams once it starts. */
export type FollowState = 'idle' | 'loading' | 'queued' | 'live' | 'reconnecting' | 'ended' | 'failed';

const sleep = (ms: number) => new Promise(resolve => setTimeout(resolve, ms));

export interface IRunFollowerOptions {
  client: HermesClient;
  runId: string;
  /**
   * The run may still be queued or running (default true): wait while it is queued. A saved output of a
   * finished run skips that look; its stream sends the settled message alone.
   */
  live?: boolean;
}

export class RunFollower implements IDisposable {
  /** What this run's cards can do. */
  readonly cardActions: ICardActions = {
    answerApproval: (approvalId, choice) => this._client.answerApproval(this.runId, approvalId, choice),
    answerClarify: (clarifyId, answer) => this._client.answerClarify(this.runId, clarifyId, answer)
  };

  constructor(options: IRunFollowerOptions) {
    this._client = options.client;
    this.runId = options.runId;
    this._live = options.live ?? true;
    this.transcript = new LiveTranscript(options.runId);
  }

  readonly runId: string;
  readonly transcript: LiveTranscript;

  /** Emitted after every folded row and every state change. */
  get changed(): ISignal<this, void> {
    return this._changed;
  }

  get state(): FollowState {
    return this._state;
  }

  get error(): string | null {
    return this._error;
  }

  /** The server does not know this run (a notebook saved elsewhere). */
  get notFound(): boolean {
    return this._notFound;
  }

  /** The run's status: the server's verdict once it came, else running. */
  get status(): RunStatus {
    return this.transcript.status;
  }

  get sessionId(): string | null {
    return this.transcript.settled?.session_id ?? this._sessionId;
  }

  /** The cell bundle the server rendered for the settled run (from its verdict, else asked for). */
  async bundle(): Promise<MimeBundle> {
    return this.transcript.settled?.bundle ?? this._client.getRunBundle(this.runId);
  }

  /** Ask the server to cancel the run; its settled rows (partial text, cancel note) follow on the stream. */
  async stop(): Promise<void> {
    await this._client.cancelRun(this.runId);
  }

  get isDisposed(): boolean {
    return this._disposed;
  }

  async start(): Promise<void> {
    if (this._state !== 'idle') {
      return;
    }
    this._setState('loading');
    try {
      if (this._live) {
        await this._waitWhileQueued();
      }
      if (!this._disposed) {
        this._attach();
      }
    } catch (error) {
      this._fail(error);
    }
  }

  dispose(): void {
    if (this._disposed) {
      return;
    }
    this._disposed = true;
    this._stream?.dispose();
    this._stream = null;
    Signal.clearData(this);
  }

  /** A queued run has no journal yet: wait in state `queued` until it starts. False if it was not queued. */
  private async _waitWhileQueued(): Promise<boolean> {
    let waited = false;
    while (!this._disposed) {
      const info = await this._client.getRun(this.runId).catch(() => null);
      if (info?.status !== 'queued') {
        return waited;
      }
      waited = true;
      this._setState('queued');
      await sleep(QUEUED_POLL_MS);
    }
    return waited;
  }

  private _attach(): void {
    const stream = new RunStream({
      client: this._client,
      runId: this.runId,
      afterSeq: this.transcript.lastSeq,
      snapshot: true
    });
    this._stream = stream;
    stream.snapshotReceived.connect((_, snapshot) => {
      this._sessionId = snapshot.session_id;
      this.transcript.restore(snapshot);
      this._changed.emit();
    });
    stream.rowReceived.connect((_, row) => {
      this._sessionId = row.session_id;
      if (this.transcript.apply(row)) {
        this._changed.emit();
      }
    });
    stream.settled.connect((_, message) => {
      this.transcript.settle(message);
      this._changed.emit();
    });
    stream.stateChanged.connect((_, state) => this._onStreamState(state));
    this._setState('live');
    stream.start();
  }

  private _onStreamState(state: RunStreamState): void {
    if (state === 'reconnecting') {
      this._setState('reconnecting');
    } else if (state === 'open') {
      this._setState('live');
    } else if (state === 'ended') {
      void this._end();
    } else if (state === 'failed') {
      this._fail(new Error(this._stream?.error ?? 'The run stream failed.'), this._stream?.notFound);
    }
  }

  /** The stream ended; a server that sent no verdict message is asked once for it. */
  private async _end(): Promise<void> {
    if (!this.transcript.settled) {
      try {
        this.transcript.verdict(await this._client.getRun(this.runId));
      } catch {
        // The journal rows alone stay on screen.
      }
    }
    this._setState('ended');
  }

  private _fail(error: unknown, notFound?: boolean): void {
    if (this._disposed) {
      return;
    }
    this._notFound = notFound ?? (error instanceof HermesApiError && error.isNotFound);
    this._error = error instanceof Error ? error.message : String(error);
    this._setState('failed');
  }

  private _setState(state: FollowState): void {
    if (this._state !== state && !this._disposed) {
      this._state = state;
      this._changed.emit();
    }
  }

  private _client: HermesClient;
  private _live: boolean;
  private _sessionId: string | null = null;
  private _stream: RunStream | null = null;
  private _state: FollowState = 'idle';
  private _error: string | null = null;
  private _notFound = false;
  private _disposed = false;
  private _changed = new Signal<this, void>(this);
}
