/**
 * Which notebook the selected session is bound to, and "Bind to <active notebook>".
 *
 * A bound session gives every run the notebook tools (read the notebook, its kernel's
 * variables, run code after an approval), from the sidebar as from a `%%hermes` cell.
 */
import React from 'react';

import { ActiveNotebook, INotebookRef, isBoundTo } from '../../model/active-notebook';
import { SessionsModel } from '../../model/sessions';
import { useSignal } from '../use-signal';

export function BindingBar(props: {
  sessions: SessionsModel;
  notebook: ActiveNotebook;
  onBind: (sid: string, notebook: INotebookRef) => void;
}): JSX.Element | null {
  useSignal(props.sessions.changed);
  useSignal(props.notebook.changed);
  const session = props.sessions.sessions.find(s => s.session_id === props.sessions.selectedId);
  if (!session) {
    return null;
  }
  const active = props.notebook.current;
  const bound = session.notebook_path?.trim() || '';
  return (
    <div className="jp-HermesBinding" data-testid="hermes-binding" data-bound={bound ? 'true' : 'false'}>
      <span className="jp-HermesBinding-text" data-testid="hermes-binding-text">
        {bound ? (
          <>
            Sees the notebook <strong title={bound}>{bound}</strong>
          </>
        ) : (
          'Sees no notebook.'
        )}
      </span>
      {active && !isBoundTo(session, active) && (
        <button
          className="jp-HermesBinding-bind"
          data-testid="hermes-bind"
          title={`Let this session read ${active.path} and use its kernel's variables`}
          onClick={() => props.onBind(session.session_id, active)}
        >
          Bind to {active.name}
        </button>
      )}
    </div>
  );
}
