/**
 * Quiet rows: the usage footer of a run, and status/compaction notes.
 */
import React from 'react';

import { INoteRow, IUsageRow } from '../../api/rows';
import { usageWords } from '../../model/usage-words';

export const UsageFooter = React.memo(function UsageFooter(props: { row: IUsageRow }): JSX.Element {
  const { row } = props;
  return (
    <div className="jp-HermesUsage" data-testid="hermes-usage" data-row-id={row.id}>
      {usageWords(row)}
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
