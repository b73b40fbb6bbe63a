/**
 * A proposed cell: what would change (a diff for a replacement, the new source
 * for an insert), where, and Accept / Reject. The same view is shown in the
 * sidebar and, while its notebook is open, next to the target cell.
 */
import React, { useState } from 'react';

import type { IAnsweredBy, IProposalRow, ProposalStatus } from '../../api/rows';
import { lineDiff } from '../../model/line-diff';
import { useSignal } from '../use-signal';
import { answerWords } from './answer-words';
import { CardActions } from './card-actions';
import { DiffView, wholeSource } from './diff-view';
import type { IProposalActions } from './proposal-actions';

const STATUS_WORDS: { [status in ProposalStatus]: string } = {
  pending: 'Waiting for your decision.',
  accepted: 'the cell is in the notebook (not run).',
  rejected: 'the notebook was left as it was.'
};

/** "Accepted by alice: the cell is in the notebook (not run)." (a deletion: "the cell was deleted.") */
export function proposalStatusWords(status: ProposalStatus, by: IAnsweredBy | null, deletes = false): string {
  if (status === 'pending') {
    return STATUS_WORDS.pending;
  }
  const what = deletes && status === 'accepted' ? 'the cell was deleted from the notebook.' : STATUS_WORDS[status];
  return `${answerWords(status, by)}: ${what}`;
}

export function proposalWhere(row: IProposalRow): string {
  const kind = row.cell_type === 'markdown' ? 'markdown cell' : 'code cell';
  if (row.action === 'replace') {
    return `New source for a ${kind}`;
  }
  if (row.action === 'delete') {
    return `Delete a ${kind}`;
  }
  return row.action === 'insert_below' ? `New ${kind} below the cell` : `New ${kind} at the end`;
}

/** The sidebar's card: actions come from the card context (the proposals plugin). */
export const ProposalCard = React.memo(function ProposalCard(props: { row: IProposalRow }): JSX.Element {
  const { proposals } = React.useContext(CardActions);
  return <ProposalView row={props.row} actions={proposals ?? null} />;
});

/** Accept or reject through the actions: busy meanwhile, a failure kept as the card's problem line. */
function useDecide(row: IProposalRow, actions: IProposalActions | null) {
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  const decide = async (how: 'accept' | 'reject') => {
    if (!actions) {
      return;
    }
    setBusy(true);
    setProblem(null);
    try {
      await (how === 'accept' ? actions.accept(row) : actions.reject(row));
    } catch (error) {
      setProblem(error instanceof Error ? error.message : String(error));
    } finally {
      setBusy(false);
    }
  };
  return { busy, problem, decide };
}

export function ProposalView(props: { row: IProposalRow; actions: IProposalActions | null; inline?: boolean }): JSX.Element {
  const { row, actions, inline } = props;
  useSignal(actions?.changed ?? null);
  const { busy, problem, decide } = useDecide(row, actions);
  const status = actions ? actions.statusOf(row) : row.status;
  const by = actions ? actions.answeredByOf(row) : row.answered_by;
  const target = actions?.targetOf(row) ?? null;
  return (
    <div
      className="jp-HermesProposal"
      data-testid={inline ? 'hermes-proposal-inline' : 'hermes-proposal-card'}
      data-proposal-id={row.proposal_id}
      data-state={status}
      data-row-id={row.id}
    >
      <div className="jp-HermesProposal-head">
        <span className="jp-HermesProposal-title">Hermes proposes: {proposalWhere(row)}</span>
      </div>
      <ProposalPreview row={row} />
      {status === 'pending' ? (
        <Decision row={row} actions={actions} target={target} busy={busy} inline={inline} decide={decide} />
      ) : (
        <div className="jp-HermesProposal-status" data-testid="hermes-proposal-status">
          {proposalStatusWords(status, by, row.action === 'delete')}
        </div>
      )}
      {problem && (
        <div className="jp-HermesProposal-problem" role="alert">
          {problem}
        </div>
      )}
    </div>
  );
}

/** Accept and Reject while the proposal waits; without a target notebook, where to decide it. */
function Decision(props: {
  row: IProposalRow;
  actions: IProposalActions | null;
  target: string | null;
  busy: boolean;
  inline?: boolean;
  decide: (how: 'accept' | 'reject') => Promise<void>;
}): JSX.Element {
  const { row, actions, target, busy, decide } = props;
  return (
    <div className="jp-HermesProposal-actions">
      <button
        className="jp-Button jp-mod-accept jp-mod-styled"
        data-testid="hermes-proposal-accept"
        disabled={busy || !actions || !target}
        title={!target ? 'Open the notebook to accept this cell' : row.action === 'delete'
          ? `Delete this cell from ${target}` : `Put this cell into ${target}; it is not run`}
        aria-label={row.action === 'delete' ? `Accept deleting the cell${target ? ` from ${target}` : ''}`
          : `Accept the proposed cell${target ? ` into ${target}` : ''}`}
        onClick={() => void decide('accept')}
      >
        Accept
      </button>
      <button
        className="jp-Button jp-mod-reject jp-mod-styled"
        data-testid="hermes-proposal-reject"
        disabled={busy || !actions}
        onClick={() => void decide('reject')}
      >
        Reject
      </button>
      {!target && !props.inline && (
        <span className="jp-HermesProposal-hint">
          {actions ? 'Open the notebook to accept it.' : 'Decide it in the Hermes sidebar.'}
        </span>
      )}
    </div>
  );
}

function ProposalPreview(props: { row: IProposalRow }): JSX.Element {
  const { row } = props;
  const lines =
    row.action === 'delete'
      ? wholeSource(row.old_source ?? '', 'remove')
      : row.action === 'replace' && row.old_source !== null
        ? lineDiff(row.old_source, row.source)
        : wholeSource(row.source, 'add');
  return <DiffView lines={lines} attributes={{ 'data-testid': 'hermes-proposal-diff' }} />;
}
