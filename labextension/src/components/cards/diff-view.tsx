/**
 * A source diff as the proposal card and the cell-change card show it (docs/proposals.md,
 * docs/notebook-edits.md): one row per line, its +/− sign hidden from screen readers.
 */
import React from 'react';

import type { DiffOp, IDiffLine } from '../../model/line-diff';

/** Every line of one source, all added (a new cell) or all removed (a deleted one). */
export function wholeSource(source: string, op: Exclude<DiffOp, 'same'>): IDiffLine[] {
  return source.split('\n').map(text => ({ op, text }));
}

/** The attributes each card puts on its diff (its test hooks and name); the rest is shared. */
type DiffAttributes = { 'data-testid'?: string; 'data-hermes-diff'?: string; 'aria-label'?: string };

export function DiffView(props: { lines: IDiffLine[]; attributes: DiffAttributes }): JSX.Element {
  return (
    <pre className="jp-HermesProposal-diff" tabIndex={0} {...props.attributes}>
      {props.lines.map((line, i) => (
        <div key={i} className={`jp-HermesProposal-line jp-mod-${line.op}`}>
          <span className="jp-HermesProposal-sign" aria-hidden="true">
            {line.op === 'add' ? '+' : line.op === 'remove' ? '−' : ' '}
          </span>
          {line.text}
        </div>
      ))}
    </pre>
  );
}
