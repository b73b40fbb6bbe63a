/**
 * A question the agent asked: the question, its choices, and the answer once
 * given. Choices become buttons only where a view provides `answerClarify`.
 */
import React from 'react';

import { IClarifyRow } from '../../api/rows';
import { CardActions } from './card-actions';

export const ClarifyCard = React.memo(function ClarifyCard(props: { row: IClarifyRow }): JSX.Element {
  const { row } = props;
  const { answerClarify } = React.useContext(CardActions);
  const pending = row.status === 'pending';
  return (
    <div
      className="jp-HermesClarify"
      data-testid="hermes-clarify-card"
      data-clarify-id={row.clarify_id}
      data-state={row.status}
      data-row-id={row.id}
    >
      <div className="jp-HermesClarify-question">{row.question}</div>
      {row.choices.length > 0 && (
        <div className="jp-HermesClarify-choices">
          {row.choices.map(choice => (
            <button
              key={choice}
              className="jp-HermesClarify-choice"
              data-chosen={choice === row.answer ? 'true' : 'false'}
              disabled={!pending || !answerClarify}
              onClick={() => void answerClarify?.(row.clarify_id, choice)}
            >
              {choice}
            </button>
          ))}
        </div>
      )}
      {!pending && (
        <div className="jp-HermesClarify-answer" data-testid="hermes-clarify-answer">
          {row.answer === null ? 'Not answered.' : `Answer: ${row.answer}`}
        </div>
      )}
    </div>
  );
});
