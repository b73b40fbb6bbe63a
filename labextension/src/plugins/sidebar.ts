/**
 * The chat sidebar plugin: session list, transcript and composer in the left area.
 *
 * "Open Hermes Chat" (Accel Shift A, in the command palette) shows the panel
 * and puts the caret in the composer; pressed while the caret is in the sidebar,
 * it gives it back to the notebook, as Escape in an idle composer does
 * (sidebar-focus.ts). In Notebook 7, whose side panels stay hidden until asked
 * for, a notebook page opens with the panel shown.
 */
import {
  ILayoutRestorer,
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ICommandPalette, showErrorMessage } from '@jupyterlab/apputils';
import { PageConfig } from '@jupyterlab/coreutils';
import { INotebookTracker } from '@jupyterlab/notebook';
import { IRenderMimeRegistry } from '@jupyterlab/rendermime';

import { plainError } from '../api/plain-errors';
import { ActiveNotebook, bindingOf } from '../model/active-notebook';
import { sendToNotebook } from '../model/cell-turn';
import { ChatModel } from '../model/chat';
import { followSessionRuns } from '../model/follow-session';
import { followNotebookSession } from '../model/notebook-session';
import { SessionsModel } from '../model/sessions';
import { IHermesChat, IHermesConnection } from '../tokens';
import { SidebarPanel } from '../widgets/sidebar-panel';
import { focusComposer, focusNotebook, sidebarHasFocus } from './sidebar-focus';

export namespace CommandIDs {
  export const open = 'hermes-jupyter:open-sidebar';
  export const newSession = 'hermes-jupyter:new-session';
}

export const sidebarPlugin: JupyterFrontEndPlugin<IHermesChat> = {
  id: 'hermes-jupyter:sidebar',
  description: 'The Hermes chat sidebar.',
  autoStart: true,
  provides: IHermesChat,
  requires: [IHermesConnection, IRenderMimeRegistry],
  optional: [ILayoutRestorer, ICommandPalette, INotebookTracker],
  activate: (
    app: JupyterFrontEnd,
    connection: IHermesConnection,
    rendermime: IRenderMimeRegistry,
    restorer: ILayoutRestorer | null,
    palette: ICommandPalette | null,
    notebooks: INotebookTracker | null
  ): IHermesChat => {
    const { sessions, active, chat } = createModels(connection, notebooks);
    const panel = new SidebarPanel(sessions, chat, rendermime, active);
    app.shell.add(panel, 'left', { rank: 900 });
    restorer?.add(panel, panel.id);

    const show = () => showPanel(app, panel.id);
    panel.onLeave = () => void focusNotebook(app, notebooks);
    addCommands(app, panel, notebooks, show);
    if (PageConfig.getOption('notebookPage') === 'notebooks') {
      void app.restored.then(show);
    }
    for (const command of [CommandIDs.open, CommandIDs.newSession]) {
      palette?.addItem({ command, category: 'Hermes' });
    }
    const askInNotebook: IHermesChat['askInNotebook'] = async (notebook, turn) => {
      show();
      try {
        return await sendToNotebook(sessions, chat, notebook, turn);
      } catch (error) {
        void showErrorMessage('Hermes could not start the turn', plainError(error).text);
        return false;
      }
    };
    return { chat, client: connection.client, show, askInNotebook };
  }
};

/**
 * The sidebar's models: the session list, the notebook in front and the open session's chat, wired
 * so a selection opens its session and the notebook in front picks its own session.
 */
function createModels(
  connection: IHermesConnection,
  notebooks: INotebookTracker | null
): { sessions: SessionsModel; active: ActiveNotebook; chat: ChatModel } {
  const { client, followers } = connection;
  const sessions = new SessionsModel(client);
  const active = new ActiveNotebook(notebooks);
  const chat = new ChatModel({
    client,
    followers,
    // a first message with no session selected starts one that sees the notebook in front
    createWithFirstTurn: (message, attachments) =>
      sessions.createWithFirstTurn(message, attachments, bindingOf(active.current)),
    onActivity: () => sessions.refreshSoon()
  });
  sessions.selectionChanged.connect((_, sid) => void chat.open(sid));
  void chat.open(sessions.selectedId);
  followSessionRuns(sessions, chat);
  if (notebooks) {
    const follow = followNotebookSession(sessions, () => notebooks.currentWidget?.context.localPath ?? null);
    notebooks.currentChanged.connect(follow);
  }
  return { sessions, active, chat };
}

/** Open (again: back to the notebook) and New Session; both leave the caret in the composer. */
function addCommands(app: JupyterFrontEnd, panel: SidebarPanel, notebooks: INotebookTracker | null, show: () => void): void {
  const own = [CommandIDs.open, CommandIDs.newSession];
  app.commands.addCommand(CommandIDs.open, {
    label: 'Open Hermes Chat',
    caption: 'Show the Hermes chat and put the cursor in its message box (again: back to the notebook)',
    execute: () => {
      if (sidebarHasFocus(panel.node) && panel.isVisible && focusNotebook(app, notebooks)) {
        return;
      }
      show();
      focusComposer(panel.node, app.commands, own);
    }
  });
  app.commands.addCommand(CommandIDs.newSession, {
    label: 'New Hermes Session',
    execute: async () => {
      show();
      await panel.newSession();
      focusComposer(panel.node, app.commands, own);
    }
  });
}

/**
 * Notebook 7's shell: side panels are hidden until expanded (its activateById
 * skips them), and a panel only shown, not marked shown, hides again as soon as
 * another plugin adds a widget to it.
 */
interface ISidePanelShell {
  expandLeft(id?: string): void;
  leftHandler: { show(): void };
}

/** Notebook 7 names its page (tree, notebooks, …) in the page config; JupyterLab does not. */
function isNotebookShell(shell: unknown): shell is ISidePanelShell {
  return (
    !!PageConfig.getOption('notebookPage') &&
    typeof (shell as Partial<ISidePanelShell>).expandLeft === 'function' &&
    typeof (shell as Partial<ISidePanelShell>).leftHandler?.show === 'function'
  );
}

function showPanel(app: JupyterFrontEnd, id: string): void {
  if (isNotebookShell(app.shell)) {
    app.shell.leftHandler.show();
    app.shell.expandLeft(id);
  } else {
    app.shell.activateById(id);
  }
}
