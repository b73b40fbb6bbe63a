/**
 * ChatModel: the open session's transcript and its actions (send, stop, retry,
 * undo). Settled turns are the session's stored turns (`GET sessions/{sid}`,
 * `turns`); a running turn comes from a RunFollower, and when its run ends the
 * stream's settled message becomes that turn in place (nothing polls, nothing
 * reloads), so the same text is never shown twice.
 */
import { ISignal, Signal } from '@lumino/signaling';

import { HermesClient } from '../api/client';
import { IPlainError, lostStream, plainError } from '../api/plain-errors';
import { IAttachment, IModelList, IQueuedTurn, ISession, ISettledMessage, IStoredTurn, SendMode } from '../api/contract';
import { DisplayRow, IUserRow } from '../api/rows';
import type { ICardActions } from '../components/cards/card-actions';
import { withContinuable } from './continuable';
import { AttachmentsModel } from './attachments';
import type { ChatStatus, IChatModel } from './chat-model';
import type { FollowerPool } from './follower-pool';
import { RunFollower } from './run-follower';
import { recoveredAfterRestart, turnRows, withTurn } from './turn-rows';

export type { ChatStatus } from './chat-model';

export interface IChatModelOptions {
  client: HermesClient;
  /** Creates a session with its first turn when the user sends without one. */
  createWithFirstTurn: (message: string, attachments?: IAttachment[]) => Promise<{ sessionId: string; runId: string }>;
  /** Called when a turn starts or settles (the list's streaming badge). */
  onActivity?: () => void;
  /** The page's shared run followers (a cell showing the same run uses the same stream); else the chat makes its own. */
  followers?: FollowerPool;
}

export class ChatModel implements IChatModel {
  constructor(options: IChatModelOptions) {
    this._client = options.client;
    this._createWithFirstTurn = options.createWithFirstTurn;
    this._onActivity = options.onActivity ?? (() => undefined);
    this._followers = options.followers ?? null;
    this._client.reconnected.connect(this._onReconnected, this);
  }

  get changed(): ISignal<this, void> {
    return this._changed;
  }

  get sessionId(): string | null {
    return this._sessionId;
  }

  get session(): ISession | null {
    return this._session;
  }

  /** The server client (for the server-wide views of the panel, e.g. what is allowed always). */
  get client(): HermesClient {
    return this._client;
  }

  /** Messages waiting for the running turn to end, oldest first (the server's queue). */
  get queued(): readonly IQueuedTurn[] {
    return this._session?.queued ?? [];
  }

  /** The models the open session's backend offers, once known. */
  get models(): IModelList | null {
    const backend = this._session?.backend;
    return backend ? (this._models.get(backend) ?? null) : null;
  }

  /** The model the next turn uses: the session's choice, else its backend's default. */
  get model(): string | null {
    return this._session?.model ?? this.models?.default ?? null;
  }

  /** The open session's backend can take a message in the middle of a turn. */
  get canSteer(): boolean {
    return this.models?.can_steer === true;
  }

  /** Settled rows, then the pending user turn, then the live run's rows. */
  get rows(): readonly DisplayRow[] {
    if (!this._rows) {
      const live = this._follower?.transcript.rows ?? [];
      const pending: DisplayRow[] = this._pending ? [this._pending] : [];
      this._rows = withContinuable([...this._settled, ...pending, ...live], this.status === 'idle');
    }
    return this._rows;
  }

  /** The session has a settled turn (to retry or undo). */
  get hasTurns(): boolean {
    return (this._session?.turns ?? []).length > 0;
  }

  get status(): ChatStatus {
    if (!this._sessionId) {
      return 'empty';
    }
    if (this._loading && !this._session) {
      return 'loading';
    }
    const state = this._follower?.state;
    if (state === 'reconnecting') {
      return 'reconnecting';
    }
    // An ended run only waits for its settled session: the server is free for the next turn.
    return this._follower && state !== 'failed' && state !== 'ended' ? 'streaming' : 'idle';
  }

  get runId(): string | null {
    return this._follower?.runId ?? null;
  }

  /** The last failure in plain words, with its technical details apart. */
  get error(): IPlainError | null {
    return this._error;
  }

  /** A turn of this session was recovered after a server restart. */
  get showRecoveryBanner(): boolean {
    if (!this._session || this._bannerDismissed.has(this._session.session_id)) {
      return false;
    }
    return recoveredAfterRestart(this.rows);
  }

  /** Id of the row receiving tokens, or null. */
  get streamingId(): string | null {
    return this._follower?.transcript.streamingId ?? null;
  }

  get isDisposed(): boolean {
    return this._disposed;
  }

  dismissBanner(): void {
    if (this._session) {
      this._bannerDismissed.add(this._session.session_id);
      this._emit();
    }
  }

  clearError(): void {
    this._error = null;
    this._emit();
  }

  /** Show a session (or none), attaching to its running turn if it has one. */
  async open(sessionId: string | null): Promise<void> {
    if (sessionId === this._sessionId && this._session) {
      return;
    }
    this._setFollower(null);
    this._sessionId = sessionId;
    this._session = null;
    this._settled = [];
    this._pending = null;
    this._error = null;
    this._emit();
    if (sessionId) {
      await this.reload();
    }
  }

  /** Re-read the session; attach to its active run unless already following it. */
  async reload(): Promise<void> {
    const sessionId = this._sessionId;
    if (!sessionId) {
      return;
    }
    const generation = ++this._generation;
    this._loading = true;
    this._emit();
    try {
      const session = await this._client.getSession(sessionId);
      if (generation !== this._generation || this._disposed) {
        return;
      }
      this._session = session;
      void this._loadModels(session.backend);
      this._settled = turnRows(session.turns ?? []);
      const active = session.active_stream_id;
      if (active && this._follower?.runId !== active) {
        this._follow(active, session.pending_user_message ?? null);
      } else if (active) {
        const text = this._pending?.text ?? session.pending_user_message ?? null;
        this._pending = this._pendingRow(active, text);
      } else if (this._follower?.state === 'ended') {
        this._setFollower(null);
      }
    } catch (error) {
      this._fail(error);
    } finally {
      if (generation === this._generation) {
        this._loading = false;
        this._emit();
      }
    }
  }

  /**
   * Send a message with the composer's attachments; false if it was not accepted (the reason is in `error`).
   * While a turn runs it is queued behind it, or (`steer`) handed to it.
   */
  async send(text: string, mode: SendMode = 'queue'): Promise<boolean> {
    const message = text.trim();
    if (!message) {
      return false;
    }
    const attachments = [...this.attachments.items];
    try {
      let runId: string;
      if (this._sessionId) {
        const started = await this._client.startRun(this._sessionId, message, mode, attachments);
        if (started.queued || started.steered) {
          this._error = null;
          this.attachments.clear();
          await this.reload();  // shows the queue; a steer shows up in the running turn
          return true;
        }
        runId = started.run_id;
      } else {
        const created = await this._createWithFirstTurn(message, attachments);
        runId = created.runId;
        if (this._sessionId !== created.sessionId) {
          await this.open(created.sessionId);
        }
      }
      this._error = null;
      this.attachments.clear();
      if (this.runId !== runId) {
        this._follow(runId, message, attachments);
      }
      this._onActivity();
      return true;
    } catch (error) {
      this._fail(error);
      return false;
    }
  }

  /** What the next turn carries (the composer's chips). */
  readonly attachments = new AttachmentsModel();

  /** What the cards of the followed run can do (errors reach the card that asked). */
  readonly cardActions: ICardActions = {
    answerApproval: (approvalId, choice) => this._client.answerApproval(this.runId ?? '', approvalId, choice),
    answerClarify: (clarifyId, answer) => this._client.answerClarify(this.runId ?? '', clarifyId, answer),
    continueTurn: () => this.continueTurn()
  };

  /** Take a queued message off the queue (it is never sent). */
  async cancelQueued(runId: string): Promise<void> {
    try {
      await this._client.cancelRun(runId);
    } catch (error) {
      this._fail(error);
    }
    await this.reload();
  }

  /** The model settings changed (docs/models.md): ask the backends for their models again, reload the session. */
  async modelsChanged(): Promise<void> {
    this._models.clear();
    this._askedModels.clear();
    await this.reload();
    this._emit();
  }

  /** Use `model` for this session's next turns (the server remembers it). */
  async setModel(model: string): Promise<void> {
    const sid = this._sessionId;
    if (!sid || !this._session || model === this.model) {
      return;
    }
    try {
      await this._client.editSession(sid, { model });
      if (this._sessionId === sid && this._session) {
        this._session = { ...this._session, model };
        this._emit();
      }
    } catch (error) {
      this._fail(error);
    }
  }

  async stop(): Promise<void> {
    const runId = this.runId;
    if (runId) {
      await this._client.cancelRun(runId).catch(error => this._fail(error));
    }
  }

  async retry(): Promise<void> {
    await this._action(async sid => {
      const started = await this._client.retry(sid);
      if (started && typeof started.run_id === 'string') {
        this._follow(started.run_id, null);
      }
    });
  }

  /** Continue the last interrupted or stopped answer: its rest streams in as a new run. */
  async continueTurn(): Promise<void> {
    await this._action(async sid => {
      const started = await this._client.continueSession(sid);
      this._follow(started.run_id, null);
    });
  }

  async undo(): Promise<void> {
    await this._action(sid => this._client.undo(sid));
  }

  dispose(): void {
    if (this._disposed) {
      return;
    }
    this._disposed = true;
    this._setFollower(null);
    this._client.reconnected.disconnect(this._onReconnected, this);
    Signal.clearData(this);
  }

  private async _action(run: (sid: string) => Promise<unknown>): Promise<void> {
    const sid = this._sessionId;
    if (!sid || this.status === 'streaming') {
      return;
    }
    try {
      await run(sid);
      this._onActivity();
      await this.reload();
    } catch (error) {
      this._fail(error);
    }
  }

  /** The backend's models, asked once per backend (a failure leaves the picker out). */
  private async _loadModels(backend: string | undefined): Promise<void> {
    if (!backend || this._models.has(backend) || this._askedModels.has(backend)) {
      return;
    }
    this._askedModels.add(backend);
    try {
      this._models.set(backend, await this._client.listModels(backend));
      this._emit();
    } catch {
      this._askedModels.delete(backend);
    }
  }

  private _follow(runId: string, pendingText: string | null, attachments: IAttachment[] = []): void {
    const shared = this._followers;
    const follower = shared ? shared.acquire(runId, true) : new RunFollower({ client: this._client, runId });
    this._pending = this._pendingRow(runId, pendingText, attachments);
    this._setFollower(follower);
    follower.changed.connect(this._onFollowerChanged, this);
    if (!shared) {
      void follower.start();
    } else if (follower.state === 'ended' || follower.state === 'failed') {
      this._onFollowerChanged(follower); // another view of the run saw it end already
    }
  }

  /** The user's turn while it is not settled, unless the session already shows it. */
  private _pendingRow(runId: string, text: string | null, attachments: IAttachment[] = []): IUserRow | null {
    if (!text || this._session?.pending_continues) {
      return null; // a continuation sends no user message
    }
    if ((this._session?.turns ?? []).some(turn => turn.run_id === runId)) {
      return null;
    }
    const row: IUserRow = { kind: 'user', id: `${runId}:user`, text, pending: true };
    return attachments.length ? { ...row, attachments } : row;
  }

  private _onFollowerChanged(follower: RunFollower): void {
    if (follower !== this._follower) {
      return;
    }
    if (follower.state === 'ended' || follower.state === 'failed') {
      if (follower.state === 'failed') {
        this._error = lostStream(follower.error);
      }
      this._onActivity();
      void this._settle(follower);
    }
    this._emit();
  }

  /**
   * The ended run becomes its settled turn in one step: the settled message is the turn the server
   * stored, so it is appended as it is. The session is read again only when the message did not come
   * (a lost stream) or messages wait in the queue (the next one is followed from the session).
   */
  private async _settle(follower: RunFollower): Promise<void> {
    const settled = follower.transcript.settled;
    const session = this._session;
    if (settled && session && session.session_id === settled.session_id && !session.queued?.length) {
      const turns = withTurn(session.turns ?? [], settledTurn(settled, this._pending));
      this._session = { ...session, turns, active_stream_id: null, pending_user_message: null, pending_continues: null };
      this._settled = turnRows(turns);
      this._setFollower(null);
      this._emit();
      return;
    }
    await this.reload();
    if (this._follower === follower && this._session?.active_stream_id !== follower.runId) {
      this._setFollower(null);
      this._emit();
    }
  }

  private _setFollower(follower: RunFollower | null): void {
    const old = this._follower;
    if (old) {
      old.changed.disconnect(this._onFollowerChanged, this);
      this._followers ? this._followers.release(old) : old.dispose();
    }
    this._follower = follower;
    if (!follower) {
      this._pending = null;
    }
    this._rows = null;
  }

  /** The server is back: a "cannot be reached" is no longer true, and the session may have moved on. */
  private _onReconnected(): void {
    if (this._error?.offline) {
      this._error = null;
      void this.reload();
    }
  }

  private _fail(error: unknown): void {
    this._error = plainError(error);
    this._emit();
  }

  private _emit(): void {
    this._rows = null;
    if (!this._disposed) {
      this._changed.emit();
    }
  }

  private _client: HermesClient;
  private _createWithFirstTurn: (message: string, attachments?: IAttachment[]) => Promise<{ sessionId: string; runId: string }>;
  private _onActivity: () => void;
  private _sessionId: string | null = null;
  private _session: ISession | null = null;
  private _settled: DisplayRow[] = [];
  private _pending: IUserRow | null = null;
  private _follower: RunFollower | null = null;
  private _followers: FollowerPool | null;
  private _rows: DisplayRow[] | null = null;
  private _loading = false;
  private _error: IPlainError | null = null;
  private _generation = 0;
  private _bannerDismissed = new Set<string>();
  private _models = new Map<string, IModelList>();
  private _askedModels = new Set<string>();
  private _disposed = false;
  private _changed = new Signal<this, void>(this);
}

/** The stored turn a settled message stands for: its rows after its user row (the one the chat showed
 * while the turn ran, for a server that does not send it). */
function settledTurn(message: ISettledMessage, pending: IUserRow | null): IStoredTurn {
  const shown = pending ? { id: pending.id, text: pending.text, attachments: pending.attachments } : null;
  const user = message.user !== undefined ? message.user : shown;
  return { run_id: message.run_id, status: message.status, rows: message.transcript.rows, user };
}
