/**
 * Reasoning: collapsed by default, plain text (it is never part of the answer).
 */
import React from 'react';

export function Reasoning(props: { text: string; streaming?: boolean }): JSX.Element {
  return (
    <details className="jp-HermesReasoning" data-testid="hermes-reasoning" data-role="reasoning">
      <summary>{props.streaming ? 'Thinking…' : 'Reasoning'}</summary>
      <div className="jp-HermesReasoning-text">{props.text}</div>
    </details>
  );
}
