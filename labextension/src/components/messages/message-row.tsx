/**
 * One display row, by kind. Memoised on the row object: rows are immutable, so
 * only a changed row (usually the streaming one) re-renders.
 */
import type { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import React from 'react';

import { DisplayRow, IStoredAssistantRow, IUserRow } from '../../api/rows';
import { ApprovalCard } from '../cards/approval-card';
import { ClarifyCard } from '../cards/clarify-card';
import { Marker } from '../cards/marker';
import { Note, UsageFooter } from '../cards/notes';
import { PlanChecklist } from '../cards/plan';
import { ProposalCard } from '../cards/proposal-card';
import { ToolCard } from '../cards/tool-card';
import { attachmentTitle } from '../../model/attachments';
import { Markdown } from './markdown';
import { Reasoning } from './reasoning';

export interface IMessageRowProps {
  row: DisplayRow;
  rendermime: IRenderMimeRegistry;
  /** The row still receives tokens. */
  streaming?: boolean;
}

export const MessageRow = React.memo(function MessageRow(props: IMessageRowProps): JSX.Element | null {
  const { row, rendermime, streaming } = props;
  switch (row.kind) {
    case 'user':
      return <UserMessage row={row} />;
    case 'assistant':
      return <AssistantMessage row={row} rendermime={rendermime} streaming={streaming} />;
    case 'reasoning':
      return <Reasoning text={row.text} streaming={streaming} />;
    case 'tool':
      return <ToolCard row={row} />;
    case 'approval':
      return <ApprovalCard row={row} />;
    case 'clarify':
      return <ClarifyCard row={row} />;
    case 'plan':
      return <PlanChecklist row={row} />;
    case 'proposal':
      return <ProposalCard row={row} />;
    case 'usage':
      return <UsageFooter row={row} />;
    case 'note':
      return <Note row={row} />;
    case 'marker':
      return <Marker row={row} rendermime={rendermime} />;
    default:
      // A kind this view shows elsewhere (a turn's changed cells are grouped into one card).
      return null;
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
            <li key={i} data-kind={String(a.kind)} title={typeof a.text === 'string' ? a.text.slice(0, 400) : undefined}>
              {attachmentTitle(a)}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

function AssistantMessage(props: {
  row: IStoredAssistantRow;
  rendermime: IRenderMimeRegistry;
  streaming?: boolean;
}): JSX.Element {
  const { row, rendermime, streaming } = props;
  const tags = [row.partial ? 'partial' : '', row.recovered ? 'recovered' : ''].filter(Boolean);
  return (
    <div
      className="jp-HermesMessage jp-HermesMessage-assistant"
      data-role="assistant"
      data-row-id={row.id}
      data-streaming={streaming ? 'true' : 'false'}
      data-partial={row.partial ? 'true' : 'false'}
      data-recovered={row.recovered ? 'true' : 'false'}
    >
      {tags.length > 0 && <div className="jp-HermesMessage-tag">{tags.join(' · ')}</div>}
      <Markdown
        className="jp-HermesMessage-content"
        text={row.text}
        rendermime={rendermime}
        streaming={streaming}
        cacheKey={row.id}
      />
    </div>
  );
}
