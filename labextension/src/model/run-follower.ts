/**
 * RunFollower: one run's transcript, read from the journal and kept live.
 *
 * It backfills over REST (`GET runs/{id}/events`), then, if the run has not
 * ended, attaches a RunStream at the last seq it folded. Folding ignores any
 * seq already seen, so the two sources can overlap without duplicating text.
 */
import { IDisposable } from '@lumino/disposable';
import { ISignal, Signal } from '@lumino/signaling';

import { HermesApiError, HermesClient } from '../api/client';
import {
  IJournalRow,
  IRunInfo,
  RunStatus,
  isFinalStatus,
  statusOfTerminal
} from '../api/contract';
import { RunStream, RunStreamState } from '../api/stream';
import { findServerMarker } from './output-recovery';
import {
  ITranscript,
  applyEvent,
  emptyTranscript,
  settleWithoutTerminal
} from './transcript';

/** Retries of a first read that finds no journal (a run just admitted). */
const FIRST_READ_RETRIES = 3;

export type FollowState = 'idle' | 'loading' | 'live' | 'reconnecting' | 'ended' | 'failed';

export interface IRunFollowerOptions {
  client: HermesClient;
  runId: string;
  /** Attach to the live stream when the run has not ended (default true). */
  live?: boolean;
  /**
   * When the server settled the run without a terminal row, close the
   * transcript with a client-made marker (default true). The sidebar turns this
   * off: it shows the server's marker from the settled session instead.
   */
  settleMarker?: boolean;
}

export class RunFollower implements IDisposable {
  /** Answer an approval of this run (the run output's cards call it). */
  readonly answerApproval = (runId: string, approvalId: string, choice: string): Promise<unknown> =>
    this._client.answerApproval(runId, approvalId, choice);

  constructor(options: IRunFollowerOptions) {
    this._client = options.client;
    this.runId = options.runId;
    this._live = options.live ?? true;
    this._settleMarker = options.settleMarker ?? true;
    this._transcript = emptyTranscript(options.runId);
  }

  readonly runId: string;

  /** Emitted after every folded row and every state change. */
  get changed(): ISignal<this, void> {
    return this._changed;
  }

  get transcript(): ITranscript {
    return this._transcript;
  }

  get state(): FollowState {
    return this._state;
  }

  get error(): string | null {
    return this._error;
  }

  /** The run's status: from the server when known, else from the terminal row. */
  get status(): RunStatus {
    if (this._info && isFinalStatus(this._info.status)) {
      return this._info.status;
    }
    const terminal = this._transcript.terminal;
    return terminal ? statusOfTerminal(terminal) : (this._info?.status ?? 'running');
  }

  get sessionId(): string | null {
    return this._info?.session_id ?? this._transcript.terminal?.session_id ?? null;
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
      const rows = await this._readFirst();
      this._applyAll(rows);
      if (this._disposed || this._transcript.terminal) {
        return this._end();
      }
      this._info = await this._client.getRun(this.runId);
      if (this._disposed) {
        return;
      }
      if (isFinalStatus(this._info.status) || !this._live) {
        // Settled without (or before) a terminal row: read what is left.
        this._applyAll(
          await this._client.readAllEvents(this.runId, this._transcript.lastSeq)
        );
        return this._end();
      }
      this._attach();
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

  /**
   * The first read. A run that was just admitted may not have a journal yet,
   * so a 404 is retried a few times before it counts.
   */
  private async _readFirst(): Promise<IJournalRow[]> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this._client.readAllEvents(this.runId, 0);
      } catch (error) {
        const missing = error instanceof HermesApiError && error.isNotFound;
        if (!missing || attempt >= FIRST_READ_RETRIES || this._disposed) {
          throw error;
        }
        await new Promise(resolve => setTimeout(resolve, 300 * (attempt + 1)));
      }
    }
  }

  private _attach(): void {
    const stream = new RunStream({
      client: this._client,
      runId: this.runId,
      afterSeq: this._transcript.lastSeq
    });
    this._stream = stream;
    stream.rowReceived.connect((_, row) => {
      this._transcript = applyEvent(this._transcript, row);
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
      this._fail(new Error(this._stream?.error ?? 'The run stream failed.'));
    }
  }

  private async _end(): Promise<void> {
    if (this._disposed) {
      return;
    }
    if (!this._info || !isFinalStatus(this._info.status)) {
      try {
        this._info = await this._client.getRun(this.runId);
      } catch {
        // The terminal row alone still gives the status.
      }
    }
    if (this._disposed) {
      return;
    }
    if (this._settleMarker && !this._transcript.terminal && isFinalStatus(this.status)) {
      const sessionId = this.sessionId;
      const marker =
        this.status === 'interrupted' && sessionId
          ? await findServerMarker(this._client, sessionId, this.runId)
          : null;
      if (this._disposed) {
        return;
      }
      this._transcript = settleWithoutTerminal(
        this._transcript,
        this.status,
        marker ?? undefined
      );
    }
    this._setState('ended');
  }

  private _applyAll(rows: IJournalRow[]): void {
    if (rows.length === 0 || this._disposed) {
      return;
    }
    this._transcript = rows.reduce(applyEvent, this._transcript);
    this._changed.emit();
  }

  private _fail(error: unknown): void {
    if (this._disposed) {
      return;
    }
    this._error =
      error instanceof HermesApiError || error instanceof Error
        ? error.message
        : String(error);
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
  private _settleMarker: boolean;
  private _transcript: ITranscript;
  private _info: IRunInfo | null = null;
  private _stream: RunStream | null = null;
  private _state: FollowState = 'idle';
  private _error: string | null = null;
  private _disposed = false;
  private _changed = new Signal<this, void>(this);
}
