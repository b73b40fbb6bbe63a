/**
 * The session list, newest first, with a New button and, when the server has
 * more, a button that reads the next page of older sessions. A failed read is said by the
 * sidebar's one notice (model/notice.ts), not here.
 */
import React from 'react';

import { SessionsModel, groupByNotebook } from '../../model/sessions';
import { useSignal } from '../use-signal';
import { SessionItem } from './session-item';

export interface ISessionListProps {
  model: SessionsModel;
  onNew: () => void;
  onRename: (sid: string, title: string) => void;
  onDelete: (sid: string) => void;
}

export function SessionList(props: ISessionListProps): JSX.Element {
  const { model } = props;
  useSignal(model.changed);
  const select = React.useCallback((sid: string) => model.select(sid), [model]);
  const groups = groupByNotebook(model.sessions);
  // Headers only when some session belongs to a notebook: a plain list otherwise.
  const headed = groups.some(group => group.notebook !== '');
  return (
    <div className="jp-HermesSessions">
      <div className="jp-HermesSessions-header">
        <span className="jp-HermesSessions-label">Sessions</span>
        <button
          className="jp-Button jp-mod-styled jp-mod-accept jp-HermesSessions-new"
          data-testid="hermes-new-session"
          onClick={props.onNew}
        >
          New
        </button>
      </div>
      <ul className="jp-HermesSessions-list" data-testid="hermes-session-list" aria-label="Hermes sessions">
        {groups.map(group => (
          <React.Fragment key={`group:${group.notebook}`}>
            {headed && (
              <li className="jp-HermesSessions-group" data-testid="hermes-session-group" title={group.notebook}>
                {group.notebook || 'Not in a notebook'}
              </li>
            )}
            {group.sessions.map(session => (
              <SessionItem
                key={session.session_id}
                session={session}
                selected={session.session_id === model.selectedId}
                onSelect={select}
                onRename={props.onRename}
                onDelete={props.onDelete}
              />
            ))}
          </React.Fragment>
        ))}
        {model.loaded && model.sessions.length === 0 && !model.error && (
          <li className="jp-HermesSessions-empty">No sessions yet.</li>
        )}
      </ul>
      {model.hasOlder && (
        <button
          className="jp-Button jp-mod-styled jp-HermesSessions-older"
          data-testid="hermes-older-sessions"
          disabled={model.loadingOlder}
          onClick={() => void model.showOlder()}
        >
          {model.loadingOlder ? 'Loading older sessions…' : 'Show older sessions'}
        </button>
      )}
    </div>
  );
}
