/**
 * The Hermes sidebar: session list above the open session's chat.
 */
import type { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import React from 'react';

import { ActiveNotebook, INotebookRef } from '../../model/active-notebook';
import type { IChatModel } from '../../model/chat-model';
import { SessionsModel } from '../../model/sessions';
import { BindingBar } from './binding-bar';
import { ChatPanel } from './chat-panel';
import { SessionList } from './session-list';

export interface ISidebarProps {
  sessions: SessionsModel;
  chat: IChatModel;
  rendermime: IRenderMimeRegistry;
  onNew: () => void;
  onRename: (sid: string, title: string) => void;
  onDelete: (sid: string) => void;
  notebook: ActiveNotebook;
  onBind: (sid: string, notebook: INotebookRef) => void;
  /** Escape in an idle composer: give the focus back to the notebook. */
  onLeave?: () => void;
}

export function Sidebar(props: ISidebarProps): JSX.Element {
  return (
    <div className="jp-HermesSidebar-body">
      <SessionList
        model={props.sessions}
        onNew={props.onNew}
        onRename={props.onRename}
        onDelete={props.onDelete}
      />
      <BindingBar sessions={props.sessions} notebook={props.notebook} onBind={props.onBind} />
      <ChatPanel model={props.chat} rendermime={props.rendermime} sessions={props.sessions} onLeave={props.onLeave} />
    </div>
  );
}
