/**
 * What a card can do, provided by the views that talk to the server (sidebar,
 * run output) for the run they show. Without a provider, cards only display.
 */
import React from 'react';

import type { ICellChangeActions } from './cell-change-actions';
import type { IProposalActions } from './proposal-actions';

export interface ICardActions {
  answerApproval?: (approvalId: string, choice: string) => Promise<unknown>;
  answerClarify?: (clarifyId: string, answer: string) => Promise<unknown>;
  /** Continue the session's last interrupted or stopped answer (shown on a `continuable` marker). */
  continueTurn?: () => Promise<unknown>;
  /** Set by the proposals plugin when it loads (it needs the notebook tracker). */
  proposals?: IProposalActions;
  /** Keep / Undo of changed cells (the cell-changes plugin); else the shared provider, if any. */
  cellChanges?: ICellChangeActions;
}

export const CardActions = React.createContext<ICardActions>({});
