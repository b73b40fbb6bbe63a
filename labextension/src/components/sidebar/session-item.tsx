/**
 * One session in the list: title, notebook and age, streaming badge, rename
 * (inline) and delete.
 *
 * The row is a plain list item holding three buttons (open, rename, delete):
 * no control nests inside another, so each is reachable by keyboard and named
 * for screen readers. The selected row is marked `aria-current`.
 */
import React, { useState } from 'react';

import { ISessionSummary } from '../../api/contract';
import { isStreaming, sessionSubtitle, sessionTitle } from '../../model/sessions';
import { exactTime, relativeTime } from '../../model/when';

export interface ISessionItemProps {
  session: ISessionSummary;
  selected: boolean;
  onSelect: (sid: string) => void;
  onRename: (sid: string, title: string) => void;
  onDelete: (sid: string) => void;
}

export const SessionItem = React.memo(function SessionItem(props: ISessionItemProps): JSX.Element {
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
      aria-current={selected ? 'true' : undefined}
      onClick={() => props.onSelect(sid)}
    >
      {editing ? (
        <RenameInput draft={draft} onDraft={setDraft} onCommit={commit} onCancel={() => setEditing(false)} />
      ) : (
        <SessionLabel session={session} onRename={startRename} />
      )}
      {streaming && (
        <span className="jp-HermesBadge" data-testid="hermes-streaming-badge">
          streaming
        </span>
      )}
      <button className="jp-HermesIconButton" data-testid="hermes-session-rename" title="Rename" aria-label="Rename" onClick={startRename}>
        ✎
      </button>
      <button
        className="jp-HermesIconButton"
        data-testid="hermes-session-delete"
        title="Delete"
        aria-label="Delete"
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

/** The inline name field: Enter or leaving it renames, Escape gives up. */
function RenameInput(props: {
  draft: string;
  onDraft: (text: string) => void;
  onCommit: () => void;
  onCancel: () => void;
}): JSX.Element {
  return (
    <input
      className="jp-HermesSessionItem-input"
      data-testid="hermes-session-rename-input"
      aria-label="New name of the session"
      autoFocus
      value={props.draft}
      onClick={event => event.stopPropagation()}
      onChange={event => props.onDraft(event.target.value)}
      onBlur={props.onCommit}
      onKeyDown={event => {
        if (event.key === 'Enter') {
          props.onCommit();
        } else if (event.key === 'Escape') {
          props.onCancel();
        }
      }}
    />
  );
}

/** The open button: title, then the notebook and how long ago the session changed. */
function SessionLabel(props: { session: ISessionSummary; onRename: (event: React.MouseEvent) => void }): JSX.Element {
  const { session } = props;
  const title = sessionTitle(session);
  const subtitle = sessionSubtitle(session);
  const when = session.updated_at ?? session.created_at;
  return (
    <button
      className="jp-HermesSessionItem-open"
      data-testid="hermes-session-open"
      title={[title, subtitle, when ? `last changed ${exactTime(when)}` : ''].filter(Boolean).join('\n')}
      onDoubleClick={props.onRename}
    >
      <span className="jp-HermesSessionItem-title" data-testid="hermes-session-title">
        {title}
      </span>
      <span className="jp-HermesSessionItem-meta">
        {subtitle && (
          <span className="jp-HermesSessionItem-subtitle" data-testid="hermes-session-subtitle">
            {subtitle}
          </span>
        )}
        <span className="jp-HermesSessionItem-when" data-testid="hermes-session-when">
          {relativeTime(when)}
        </span>
      </span>
    </button>
  );
}
