/**
 * One session in the list: title, streaming badge, rename (inline) and delete.
 */
import React, { useState } from 'react';

import { ISessionSummary } from '../../api/contract';
import { isStreaming, sessionTitle } from '../../model/sessions';

export interface ISessionItemProps {
  session: ISessionSummary;
  selected: boolean;
  onSelect: (sid: string) => void;
  onRename: (sid: string, title: string) => void;
  onDelete: (sid: string) => void;
}

export const SessionItem = React.memo(function SessionItem(
  props: ISessionItemProps
): JSX.Element {
  const { session, selected } = props;
  const sid = session.session_id;
  const streaming = isStreaming(session);
  const [editing, setEditing] = useState(false);
  const [draft, setDraft] = useState('');

  const startRename = (event: React.MouseEvent) => {
    event.stopPropagation();
    setDraft(session.title ?? '');
    setEditing(true);
  };
  const commit = () => {
    setEditing(false);
    const title = draft.trim();
    if (title && title !== session.title) {
      props.onRename(sid, title);
    }
  };

  return (
    <li
      className={`jp-HermesSessionItem${selected ? ' jp-mod-selected' : ''}`}
      data-testid="hermes-session-item"
      data-session-id={sid}
      data-streaming={streaming ? 'true' : 'false'}
      aria-selected={selected}
      role="option"
      onClick={() => props.onSelect(sid)}
    >
      {editing ? (
        <input
          className="jp-HermesSessionItem-input"
          data-testid="hermes-session-rename-input"
          autoFocus
          value={draft}
          onClick={event => event.stopPropagation()}
          onChange={event => setDraft(event.target.value)}
          onBlur={commit}
          onKeyDown={event => {
            if (event.key === 'Enter') {
              commit();
            } else if (event.key === 'Escape') {
              setEditing(false);
            }
          }}
        />
      ) : (
        <span
          className="jp-HermesSessionItem-title"
          data-testid="hermes-session-title"
          title={sessionTitle(session)}
          onDoubleClick={startRename}
        >
          {sessionTitle(session)}
        </span>
      )}
      {streaming && (
        <span className="jp-HermesBadge" data-testid="hermes-streaming-badge">
          streaming
        </span>
      )}
      <button
        className="jp-HermesIconButton"
        data-testid="hermes-session-rename"
        title="Rename"
        onClick={startRename}
      >
        ✎
      </button>
      <button
        className="jp-HermesIconButton"
        data-testid="hermes-session-delete"
        title="Delete"
        onClick={event => {
          event.stopPropagation();
          props.onDelete(sid);
        }}
      >
        ✕
      </button>
    </li>
  );
});
