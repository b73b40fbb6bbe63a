/**
 * What the sidebar plugin offers the notebook plugins (proposals, context,
 * code actions): its chat, the client, and a way to show the panel.
 */
import { Token } from '@lumino/coreutils';

import type { HermesClient } from './api/client';
import type { ChatModel } from './model/chat';

export interface IHermesChat {
  readonly chat: ChatModel;
  readonly client: HermesClient;
  /** Show the sidebar (and the chat in it). */
  show(): void;
}

export const IHermesChat = new Token<IHermesChat>(
  'hermes-jupyter:chat',
  'The Hermes sidebar chat: send turns with attachments, decide proposed cells.'
);
