/**
 * The chat sidebar plugin: session list, transcript and composer in the left area.
 */
import {
  ILayoutRestorer,
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import { IRenderMimeRegistry } from '@jupyterlab/rendermime';

import { HermesClient } from '../api/client';
import { ChatModel } from '../model/chat';
import { followSessionRuns } from '../model/follow-session';
import { SessionsModel } from '../model/sessions';
import { SidebarPanel } from '../widgets/sidebar-panel';

export namespace CommandIDs {
  export const open = 'hermes-jupyter:open-sidebar';
  export const newSession = 'hermes-jupyter:new-session';
}

export const sidebarPlugin: JupyterFrontEndPlugin<void> = {
  id: 'hermes-jupyter:sidebar',
  description: 'The Hermes chat sidebar.',
  autoStart: true,
  requires: [IRenderMimeRegistry],
  optional: [ILayoutRestorer, ICommandPalette],
  activate: (
    app: JupyterFrontEnd,
    rendermime: IRenderMimeRegistry,
    restorer: ILayoutRestorer | null,
    palette: ICommandPalette | null
  ) => {
    const client = new HermesClient(app.serviceManager.serverSettings);
    const sessions = new SessionsModel(client);
    const chat = new ChatModel({
      client,
      createWithFirstTurn: message => sessions.createWithFirstTurn(message),
      onActivity: () => sessions.refreshSoon()
    });
    sessions.selectionChanged.connect((_, sid) => void chat.open(sid));
    void chat.open(sessions.selectedId);
    followSessionRuns(sessions, chat);

    const panel = new SidebarPanel(sessions, chat, rendermime);
    app.shell.add(panel, 'left', { rank: 900 });
    restorer?.add(panel, panel.id);

    app.commands.addCommand(CommandIDs.open, {
      label: 'Open Hermes Chat',
      execute: () => app.shell.activateById(panel.id)
    });
    app.commands.addCommand(CommandIDs.newSession, {
      label: 'New Hermes Session',
      execute: async () => {
        app.shell.activateById(panel.id);
        await panel.newSession();
      }
    });
    for (const command of [CommandIDs.open, CommandIDs.newSession]) {
      palette?.addItem({ command, category: 'Hermes' });
    }
  }
};
