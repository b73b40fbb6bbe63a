/**
 * What the sidebar plugin offers the notebook plugins (proposals, context,
 * code actions): its chat, the client, and a way to show the panel. Under it,
 * one connection to the server per page: the client and the run followers every
 * view shares (the sidebar, the run outputs, notebook recovery).
 */
import { Token } from '@lumino/coreutils';

import type { HermesClient } from './api/client';
import type { FollowerPool } from './model/follower-pool';
import type { INotebookRef } from './model/active-notebook';
import type { ICellTurn } from './model/cell-turn';
import type { IChatModel } from './model/chat-model';

export interface IHermesChat {
  readonly chat: IChatModel;
  readonly client: HermesClient;
  /** Show the sidebar (and the chat in it). */
  show(): void;
  /**
   * Send a turn about one of `notebook`'s cells to that notebook's session (docs/sidebar.md), shown in
   * the sidebar; false when it was not accepted (the sidebar says why).
   */
  askInNotebook(notebook: INotebookRef, turn: ICellTurn): Promise<boolean>;
}

export const IHermesChat = new Token<IHermesChat>(
  'hermes-jupyter:chat',
  'The Hermes sidebar chat: send turns with attachments, decide proposed cells.'
);

export interface IHermesConnection {
  /** The page's one Hermes server client (one reconnect signal, one set of credentials). */
  readonly client: HermesClient;
  /** One follower per run, shared by every view of it: the sidebar and a cell showing the same run use one stream. */
  readonly followers: FollowerPool;
}

export const IHermesConnection = new Token<IHermesConnection>(
  'hermes-jupyter:connection',
  'The Hermes server client of this page and the run followers its views share.'
);
