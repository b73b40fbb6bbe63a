/**
 * An approval the agent asked for: its buttons while pending (nothing runs
 * until a click), then how it was answered and by whom ("Allowed once by alice").
 */
import React from 'react';

import { IApprovalRow } from '../../api/rows';
import { answerWords } from './answer-words';
import { CardActions } from './card-actions';
import { IPlainError, plainError } from '../../api/plain-errors';

/** The buttons' words. */
const CHOICE_LABELS: { [choice: string]: string } = {
  allow_once: 'Allow once',
  allow_turn: 'Allow for this turn',
  allow_session: 'Allow for this session',
  allow_always: 'Always allow',
  deny: 'Deny'
};

/** What a choice means beyond its label. */
const CHOICE_TITLES: { [choice: string]: string } = {
  allow_turn: 'Run this, and let the agent run code again until this answer ends, without asking'
};

function label(choice: string | null): string {
  return CHOICE_LABELS[choice ?? 'deny'] ?? choice ?? '';
}

export const ApprovalCard = React.memo(function ApprovalCard(props: { row: IApprovalRow }): JSX.Element {
  const { row } = props;
  const pending = row.status === 'pending';
  return (
    <details
      open={pending}
      className={`jp-HermesToolCard jp-HermesApprovalCard jp-mod-${pending ? 'running' : row.choice === 'deny' ? 'error' : 'done'}`}
      data-testid="hermes-approval-card"
      data-approval-id={row.approval_id}
      data-state={row.status}
      data-row-id={row.id}
    >
      <summary>
        <span className="jp-HermesToolCard-name">approval</span>
        {row.description && <span className="jp-HermesToolCard-args">{row.description}</span>}
        <span className="jp-HermesToolCard-state">
          {pending ? 'waiting for your answer' : answered(row)}
        </span>
      </summary>
      {row.command && <pre className="jp-HermesToolCard-detail" tabIndex={0}>{row.command}</pre>}
      {pending ? <Answers row={row} /> : <Answered row={row} />}
    </details>
  );
});

/** "Allowed once by alice", "Not answered", … (the server's words: wording.answer_words). */
function answered(row: IApprovalRow): string {
  return answerWords(row.choice ?? 'deny', row.answered_by, row.reason);
}

function Answered(props: { row: IApprovalRow }): JSX.Element {
  const { row } = props;
  return (
    <div
      className="jp-HermesApproval"
      data-testid="hermes-approval"
      data-choice={row.choice ?? ''}
      data-answered-by={row.answered_by?.kind ?? ''}
    >
      {answered(row)}
    </div>
  );
}

function Answers(props: { row: IApprovalRow }): JSX.Element | null {
  const { answerApproval } = React.useContext(CardActions);
  const [busy, setBusy] = React.useState(false);
  const [error, setError] = React.useState<IPlainError | null>(null);
  const { row } = props;
  if (!answerApproval) {
    return null;
  }
  const click = async (choice: string): Promise<void> => {
    setBusy(true);
    setError(null);
    try {
      await answerApproval(row.approval_id, choice);
    } catch (err) {
      setError(plainError(err));
      setBusy(false);
    }
  };
  return (
    <div className="jp-HermesApproval" data-testid="hermes-approval" data-pending="true">
      {row.choices.map(choice => (
        <button
          key={choice}
          className={`jp-HermesButton jp-mod-${choice === 'deny' ? 'reject' : 'accept'}`}
          data-testid={`hermes-approval-${choice}`}
          data-hermes-choice={choice}
          title={CHOICE_TITLES[choice]}
          disabled={busy}
          onClick={event => {
            event.preventDefault();
            void click(choice);
          }}
        >
          {label(choice)}
        </button>
      ))}
      {error && (
        <span className="jp-HermesError" title={error.details}>
          The answer did not reach Hermes. {error.text}
        </span>
      )}
    </div>
  );
}
