/**
 * A tool call: name, state, arguments and the result preview (collapsed).
 */
import React from 'react';

import { IToolRow, formatArgs } from '../../api/rows';

const STATE_TEXT = { running: 'running…', done: 'done', error: 'failed' };

export const ToolCard = React.memo(function ToolCard(props: { row: IToolRow }): JSX.Element {
  const { row } = props;
  const args = formatArgs(row.args);
  return (
    <details
      className={`jp-HermesToolCard jp-mod-${row.status}`}
      data-testid="hermes-tool-card"
      data-tool-name={row.name}
      data-tid={row.tid}
      data-state={row.status}
      data-row-id={row.id}
    >
      <summary>
        <span className="jp-HermesToolCard-name">{row.name || 'tool'}</span>
        {args && <span className="jp-HermesToolCard-args">{args}</span>}
        <span className="jp-HermesToolCard-state">
          {STATE_TEXT[row.status]}
          {row.duration_s !== null ? ` · ${row.duration_s.toFixed(1)} s` : ''}
        </span>
      </summary>
      {row.args && <pre className="jp-HermesToolCard-detail" tabIndex={0}>{JSON.stringify(row.args, null, 2)}</pre>}
      {row.preview && <pre className="jp-HermesToolCard-preview" tabIndex={0}>{row.preview}</pre>}
    </details>
  );
});
