/**
 * SidebarPanel: the thin Lumino wrapper of the Hermes sidebar.
 */
import { Dialog, showDialog, showErrorMessage } from '@jupyterlab/apputils';
import type { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import { ReactWidget } from '@jupyterlab/ui-components';
import type { Message } from '@lumino/messaging';
import React from 'react';

import { plainError } from '../api/plain-errors';
import { hermesIcon } from '../components/icons';
import { Sidebar } from '../components/sidebar/sidebar';
import { ActiveNotebook, INotebookRef, bindingOf } from '../model/active-notebook';
import type { IChatModel } from '../model/chat-model';
import { SessionsModel, sessionTitle } from '../model/sessions';

export class SidebarPanel extends ReactWidget {
  constructor(
    readonly sessions: SessionsModel,
    readonly chat: IChatModel,
    private _rendermime: IRenderMimeRegistry,
    readonly notebook: ActiveNotebook = new ActiveNotebook(null)
  ) {
    super();
    this.id = 'hermes-jupyter-sidebar';
    this.addClass('jp-HermesSidebar');
    this.node.dataset.testid = 'hermes-sidebar';
    this.title.icon = hermesIcon;
    this.title.caption = 'Hermes';
  }

  /** Escape in an idle composer (the plugin gives the focus back to the notebook). */
  onLeave: (() => void) | null = null;

  /** Create a session and open it, bound to the notebook in front (the notebook is its context by default). */
  async newSession(): Promise<void> {
    try {
      await this.sessions.create(undefined, bindingOf(this.notebook.current));
    } catch (error) {
      void showErrorMessage('The session could not be created', plainError(error).text);
    }
  }

  protected onAfterShow(msg: Message): void {
    super.onAfterShow(msg);
    this.sessions.setWatching(true);
  }

  protected onAfterHide(msg: Message): void {
    super.onAfterHide(msg);
    this.sessions.setWatching(false);
  }

  protected render(): JSX.Element {
    return (
      <Sidebar
        sessions={this.sessions}
        chat={this.chat}
        rendermime={this._rendermime}
        onNew={() => void this.newSession()}
        onRename={(sid, title) => void this._rename(sid, title)}
        onDelete={sid => void this._delete(sid)}
        notebook={this.notebook}
        onBind={(sid, notebook) => void this._bind(sid, notebook)}
        onLeave={() => this.onLeave?.()}
      />
    );
  }

  private async _rename(sid: string, title: string): Promise<void> {
    try {
      await this.sessions.rename(sid, title);
    } catch (error) {
      void showErrorMessage('The session could not be renamed', plainError(error).text);
    }
  }

  private async _bind(sid: string, notebook: INotebookRef): Promise<void> {
    try {
      await this.sessions.bind(sid, notebook.path, notebook.kernelId);
    } catch (error) {
      void showErrorMessage(`The session could not be bound to ${notebook.name}`, plainError(error).text);
    }
  }

  private async _delete(sid: string): Promise<void> {
    const session = this.sessions.sessions.find(s => s.session_id === sid);
    const name = session ? sessionTitle(session) : sid;
    const result = await showDialog({
      title: 'Delete session',
      body: `Delete "${name}" and its run journals? This cannot be undone.`,
      buttons: [Dialog.cancelButton(), Dialog.warnButton({ label: 'Delete' })]
    });
    if (!result.button.accept) {
      return;
    }
    try {
      await this.sessions.remove(sid);
    } catch (error) {
      void showErrorMessage('The session could not be deleted', plainError(error).text);
    }
  }

  dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this.chat.dispose();
    this.sessions.dispose();
    this.notebook.dispose();
    super.dispose();
  }
}
