/**
 * A question the agent asked: the question, its choices and a box for an
 * answer in the user's own words while it waits, then who answered and the
 * answer ("Answered by alice: yes", or "Not answered"). Answering needs a view
 * that provides `answerClarify`.
 */
import React from 'react';

import { IClarifyRow } from '../../api/rows';
import { IPlainError, plainError } from '../../api/plain-errors';
import { answerWords } from './answer-words';
import { CardActions } from './card-actions';

export const ClarifyCard = React.memo(function ClarifyCard(props: { row: IClarifyRow }): JSX.Element {
  const { row } = props;
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
      {pending ? (
        <Answers row={row} />
      ) : (
        <div
          className="jp-HermesClarify-answer"
          data-testid="hermes-clarify-answer"
          data-answered-by={row.answered_by?.kind ?? ''}
        >
          {clarifyWords(row)}
        </div>
      )}
    </div>
  );
});

/** The server's words for an answered question (outputs.py `_clarify_words`). */
export function clarifyWords(row: IClarifyRow): string {
  if (row.answer === null) {
    return answerWords('answered', row.answered_by ?? { kind: 'timeout' }, row.reason);
  }
  return `${answerWords('answered', row.answered_by)}: ${row.answer}`;
}

/** Sending an answer: busy until the card settles; a failure is shown and the card can be answered again. */
function useSendAnswer(row: IClarifyRow) {
  const { answerClarify } = React.useContext(CardActions);
  const [busy, setBusy] = React.useState(false);
  const [error, setError] = React.useState<IPlainError | null>(null);
  const send = async (answer: string): Promise<void> => {
    if (!answerClarify || !answer.trim()) {
      return;
    }
    setBusy(true);
    setError(null);
    try {
      await answerClarify(row.clarify_id, answer.trim());
    } catch (err) {
      setError(plainError(err));
      setBusy(false);
    }
  };
  return { canAnswer: !!answerClarify, busy, error, send };
}

function Answers(props: { row: IClarifyRow }): JSX.Element {
  const { row } = props;
  const [text, setText] = React.useState('');
  const { canAnswer, busy, error, send } = useSendAnswer(row);
  const disabled = busy || !canAnswer;
  return (
    <form
      className="jp-HermesClarify-choices"
      onSubmit={event => {
        event.preventDefault();
        void send(text);
      }}
    >
      {row.choices.map(choice => (
        <button
          key={choice}
          type="button"
          className="jp-HermesClarify-choice jp-HermesButton"
          data-testid="hermes-clarify-choice"
          disabled={disabled}
          onClick={() => void send(choice)}
        >
          {choice}
        </button>
      ))}
      {canAnswer && <OwnWords text={text} hasChoices={row.choices.length > 0} disabled={disabled} onText={setText} />}
      {error && (
        <span className="jp-HermesError" title={error.details}>
          The answer did not reach Hermes. {error.text}
        </span>
      )}
    </form>
  );
}

/** An answer in the user's own words: the box and its submit button. */
function OwnWords(props: { text: string; hasChoices: boolean; disabled: boolean; onText: (text: string) => void }): JSX.Element {
  return (
    <>
      <input
        className="jp-HermesClarify-text"
        data-testid="hermes-clarify-text"
        aria-label="Your answer"
        placeholder={props.hasChoices ? 'Or type an answer…' : 'Type your answer…'}
        value={props.text}
        disabled={props.disabled}
        onChange={event => props.onText(event.target.value)}
      />
      <button
        type="submit"
        className="jp-HermesButton jp-mod-accept"
        data-testid="hermes-clarify-send"
        disabled={props.disabled || !props.text.trim()}
      >
        Answer
      </button>
    </>
  );
}
