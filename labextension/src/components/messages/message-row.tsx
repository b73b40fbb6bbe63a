/**
 * One display row. Memoised on the row object: rows are immutable, so only a
 * changed row (usually the streaming one) re-renders.
 */
import type { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import React from 'react';

import { DisplayRow, IAssistantRow, IUserRow } from '../../model/rows';
import { Marker } from '../marker';
import { ToolCard } from '../tool-card';
import { Markdown } from './markdown';
import { Reasoning } from './reasoning';

export interface IMessageRowProps {
  row: DisplayRow;
  rendermime: IRenderMimeRegistry;
}

export const MessageRow = React.memo(function MessageRow(
  props: IMessageRowProps
): JSX.Element {
  const { row, rendermime } = props;
  switch (row.kind) {
    case 'user':
      return <UserMessage row={row} />;
    case 'assistant':
      return <AssistantMessage row={row} rendermime={rendermime} />;
    case 'tool':
      return <ToolCard row={row} />;
    case 'marker':
      return <Marker row={row} rendermime={rendermime} />;
  }
});

function UserMessage(props: { row: IUserRow }): JSX.Element {
  const { row } = props;
  return (
    <div
      className="jp-HermesMessage jp-HermesMessage-user"
      data-role="user"
      data-row-id={row.id}
      data-pending={row.pending ? 'true' : 'false'}
      data-recovered={row.recovered ? 'true' : 'false'}
    >
      {row.recovered && <div className="jp-HermesMessage-tag">recovered</div>}
      <div className="jp-HermesMessage-content jp-HermesMessage-plain">{row.text}</div>
      {row.attachments && row.attachments.length > 0 && (
        <ul className="jp-HermesAttachments" data-testid="hermes-attachments">
          {row.attachments.map((a, i) => (
            <li key={i}>{String(a.name ?? a.path ?? 'attachment')}</li>
          ))}
        </ul>
      )}
    </div>
  );
}

function AssistantMessage(props: {
  row: IAssistantRow;
  rendermime: IRenderMimeRegistry;
}): JSX.Element {
  const { row, rendermime } = props;
  const tags = [row.partial ? 'partial' : '', row.recovered ? 'recovered' : ''].filter(Boolean);
  return (
    <div
      className="jp-HermesMessage jp-HermesMessage-assistant"
      data-role="assistant"
      data-row-id={row.id}
      data-streaming={row.streaming ? 'true' : 'false'}
      data-partial={row.partial ? 'true' : 'false'}
      data-recovered={row.recovered ? 'true' : 'false'}
    >
      {tags.length > 0 && <div className="jp-HermesMessage-tag">{tags.join(' · ')}</div>}
      {row.reasoning && <Reasoning text={row.reasoning} streaming={row.streaming && !row.text} />}
      {row.text && (
        <Markdown
          className="jp-HermesMessage-content"
          text={row.text}
          rendermime={rendermime}
          streaming={row.streaming}
        />
      )}
    </div>
  );
}
