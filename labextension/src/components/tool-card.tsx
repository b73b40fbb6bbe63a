/**
 * A tool call: name, state, arguments and the result preview (collapsed).
 */
import React from 'react';

import { IToolRow, formatArgs } from '../model/rows';

export const ToolCard = React.memo(function ToolCard(props: {
  row: IToolRow;
}): JSX.Element {
  const { row } = props;
  const state = !row.done ? 'running' : row.isError ? 'error' : 'done';
  const label = state === 'running' ? 'running…' : state === 'error' ? 'failed' : 'done';
  const args = formatArgs(row.args);
  return (
    <details
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
    </details>
  );
});
