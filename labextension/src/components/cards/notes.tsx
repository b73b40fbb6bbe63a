/**
 * Quiet rows: the usage footer of a run, and status/compaction notes.
 */
import React from 'react';

import { INoteRow, IUsageRow } from '../../api/rows';

function tokens(n: number): string {
  return n >= 1000 ? `${(n / 1000).toFixed(1)}k` : String(n);
}

/** Counts the provider did not report read "not reported", never 0 (docs/transcript.md). */
function tokenParts(row: IUsageRow): string[] {
  if (row.input_tokens === null && row.output_tokens === null) {
    return ['tokens not reported'];
  }
  return [
    row.input_tokens === null ? 'in not reported' : `${tokens(row.input_tokens)} in`,
    row.output_tokens === null ? 'out not reported' : `${tokens(row.output_tokens)} out`
  ];
}

export const UsageFooter = React.memo(function UsageFooter(props: { row: IUsageRow }): JSX.Element {
  const { row } = props;
  const parts = tokenParts(row);
  if (row.cached_tokens) {
    parts.push(`${tokens(row.cached_tokens)} cached`);
  }
  if (row.cost_usd !== null) {
    parts.push(`$${row.cost_usd.toFixed(4)}`);
  }
  if (row.duration_s !== null) {
    parts.push(`${row.duration_s.toFixed(1)} s`);
  }
  return (
    <div className="jp-HermesUsage" data-testid="hermes-usage" data-row-id={row.id}>
      {row.model ? `${row.model} · ` : ''}
      {parts.join(' · ')}
    </div>
  );
});

export const Note = React.memo(function Note(props: { row: INoteRow }): JSX.Element {
  const { row } = props;
  return (
    <div
      className={`jp-HermesNote jp-mod-${row.level}`}
      data-testid="hermes-note"
      data-variant={row.variant}
      data-level={row.level}
      data-row-id={row.id}
      role="status"
    >
      {row.text}
    </div>
  );
});
