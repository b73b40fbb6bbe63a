/**
 * What the chat views read and do, as one interface (the sidebar panel, the settings dialog, the
 * notebook plugins' turns). `ChatModel` is the implementation; a view depends on this, so it can be
 * given another (a test's, a second panel's) without knowing how turns are stored or followed.
 */
import { IDisposable } from '@lumino/disposable';
import { ISignal } from '@lumino/signaling';

import type { HermesClient } from '../api/client';
import type { IPlainError } from '../api/plain-errors';
import type { IModelList, IQueuedTurn, ISession, SendMode } from '../api/contract';
import type { DisplayRow } from '../api/rows';
import type { ICardActions } from '../components/cards/card-actions';
import type { AttachmentsModel } from './attachments';

export type ChatStatus = 'empty' | 'loading' | 'idle' | 'streaming' | 'reconnecting';

export interface IChatModel extends IDisposable {
  /** Any of what follows changed. */
  readonly changed: ISignal<IChatModel, void>;
  readonly sessionId: string | null;
  readonly session: ISession | null;
  readonly client: HermesClient;
  /** Settled turns' rows, then the pending user row, then the running turn's rows. */
  readonly rows: readonly DisplayRow[];
  readonly status: ChatStatus;
  /** The run being followed, if any. */
  readonly runId: string | null;
  /** Id of the row still receiving tokens. */
  readonly streamingId: string | null;
  readonly hasTurns: boolean;
  readonly queued: readonly IQueuedTurn[];
  readonly models: IModelList | null;
  readonly model: string | null;
  readonly canSteer: boolean;
  readonly error: IPlainError | null;
  readonly showRecoveryBanner: boolean;
  readonly attachments: AttachmentsModel;
  readonly cardActions: ICardActions;

  open(sessionId: string | null): Promise<void>;
  reload(): Promise<void>;
  send(text: string, mode?: SendMode): Promise<boolean>;
  stop(): Promise<void>;
  retry(): Promise<void>;
  undo(): Promise<void>;
  continueTurn(): Promise<void>;
  cancelQueued(runId: string): Promise<void>;
  setModel(model: string): Promise<void>;
  modelsChanged(): Promise<void>;
  clearError(): void;
  dismissBanner(): void;
}
