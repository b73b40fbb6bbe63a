/**
 * What a proposal card can do, provided by the proposals plugin (it owns the
 * notebook tracker). Without it (no notebook support loaded) cards only display.
 */
import type { ISignal } from '@lumino/signaling';

import type { IAnsweredBy, IProposalRow, ProposalStatus } from '../../api/rows';

export interface IProposalActions {
  /** Changes when a decision was recorded or a notebook opened or closed. */
  readonly changed: ISignal<unknown, void>;
  /** The server's status of a proposal: its answer to a decision made here, else the row's. */
  statusOf(row: IProposalRow): ProposalStatus;
  /** Who decided it: the server's answer to a decision made here, else the row's. */
  answeredByOf(row: IProposalRow): IAnsweredBy | null;
  /** The open notebook the proposal applies to (its name), or null when none is open. */
  targetOf(row: IProposalRow): string | null;
  /** Record `accepted`, then apply the cell in the open notebook (never executed). */
  accept(row: IProposalRow): Promise<void>;
  reject(row: IProposalRow): Promise<void>;
}
