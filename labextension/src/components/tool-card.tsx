/**
 * A tool call: name, state, arguments and the result preview (collapsed).
 */
import React from 'react';

import { IToolRow, formatArgs } from '../model/rows';
import { ApprovalContext } from './approval-context';

export const ToolCard = React.memo(function ToolCard(props: {
  row: IToolRow;
}): JSX.Element {
  const { row } = props;
  const state = !row.done ? 'running' : row.isError ? 'error' : 'done';
  const label = row.approval
    ? !row.done ? 'waiting for your answer' : row.approval.choice === 'allow_once' ? 'allowed' : 'denied'
    : state === 'running' ? 'running…' : state === 'error' ? 'failed' : 'done';
  const args = formatArgs(row.args);
  return (
    <details
      open={!!row.approval && !row.done}
      className={`jp-HermesToolCard jp-mod-${state}`}
      data-testid="hermes-tool-card"
      data-tool-name={row.name}
      data-tid={row.tid}
      data-state={state}
    >
      <summary>
        <span className="jp-HermesToolCard-name">{row.name}</span>
        {args && <span className="jp-HermesToolCard-args">{args}</span>}
        <span className="jp-HermesToolCard-state">
          {label}
          {row.duration !== null ? ` · ${row.duration.toFixed(1)} s` : ''}
        </span>
      </summary>
      {row.args && (
        <pre className="jp-HermesToolCard-detail">{JSON.stringify(row.args, null, 2)}</pre>
      )}
      {row.preview && <pre className="jp-HermesToolCard-preview">{row.preview}</pre>}
      {row.approval && <ApprovalAnswers row={row} />}
    </details>
  );
});

const CHOICE_LABELS: { [choice: string]: string } = { allow_once: 'Allow once', deny: 'Deny' };

/** The answers of a pending approval, or how it was answered. Nothing runs until a click. */
function ApprovalAnswers(props: { row: IToolRow }): JSX.Element | null {
  const answer = React.useContext(ApprovalContext);
  const [busy, setBusy] = React.useState(false);
  const [error, setError] = React.useState('');
  const approval = props.row.approval!;
  if (props.row.done) {
    const said = CHOICE_LABELS[approval.choice ?? 'deny'] ?? approval.choice;
    return (
      <div className="jp-HermesApproval" data-testid="hermes-approval" data-choice={approval.choice}>
        {said}
        {approval.reason && approval.reason !== 'answered' ? ` (${approval.reason})` : ''}
      </div>
    );
  }
  if (!answer) {
    return null;
  }
  const click = async (choice: string): Promise<void> => {
    setBusy(true);
    setError('');
    try {
      await answer(approval.runId, approval.id, choice);
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
      setBusy(false);
    }
  };
  return (
    <div className="jp-HermesApproval" data-testid="hermes-approval" data-pending="true">
      {approval.options.map(choice => (
        <button
          key={choice}
          className={`jp-HermesButton jp-mod-${choice === 'deny' ? 'reject' : 'accept'}`}
          data-testid={`hermes-approval-${choice}`}
          disabled={busy}
          onClick={event => {
            event.preventDefault();
            void click(choice);
          }}
        >
          {CHOICE_LABELS[choice] ?? choice}
        </button>
      ))}
      {error && <span className="jp-HermesError">{error}</span>}
    </div>
  );
}
