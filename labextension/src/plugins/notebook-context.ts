/**
 * Where the composer's attachments come from: the active notebook cell, the text
 * selected in it, a file from the server (the file dialog), or a kernel variable
 * chosen in the variable picker (its summary from the server: docs/attachments.md); and what `@`
 * in the composer names, attached by the same builders.
 */
import { JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { Dialog, ReactWidget } from '@jupyterlab/apputils';
import type { Cell } from '@jupyterlab/cells';
import { IDocumentManager } from '@jupyterlab/docmanager';
import { FileDialog } from '@jupyterlab/filebrowser';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { PathExt } from '@jupyterlab/coreutils';
import type { Contents } from '@jupyterlab/services';

import React from 'react';

import type { HermesClient, IVariableListing } from '../api/client';
import type { AttachmentKind, IAttachment } from '../api/contract';
import { VariablePicker } from '../components/composer/variable-picker';
import type { IAttachmentSources } from '../model/attachments';
import { cellMention, IMention, IMentionSource } from '../model/mentions';
import { IHermesChat } from '../tokens';

export const notebookContextPlugin: JupyterFrontEndPlugin<void> = {
  id: 'hermes-jupyter:notebook-context',
  description: 'Attach the active cell, a selection, a file or a variable to a Hermes message.',
  autoStart: true,
  requires: [IHermesChat, INotebookTracker],
  optional: [IDocumentManager],
  activate: (app: JupyterFrontEnd, hermes: IHermesChat, tracker: INotebookTracker, docs: IDocumentManager | null) => {
    hermes.chat.attachments.setSources(new NotebookSources(app, tracker, docs, hermes.client));
  }
};

/** "In [3]" for an executed code cell, else "#4" (its position). */
export function cellLabel(panel: NotebookPanel, cell: Cell): string {
  const count = cell.model.type === 'code' ? (cell.model as { executionCount?: number | null }).executionCount : null;
  return typeof count === 'number' ? `In [${count}]` : `#${panel.content.widgets.indexOf(cell) + 1}`;
}

/** The active cell's source as an attachment (with its error output, when asked). */
export function cellAttachment(panel: NotebookPanel, cell: Cell, output?: string): IAttachment {
  const language = cell.model.type === 'code' ? kernelLanguage(panel) : cell.model.type;
  const item: IAttachment = {
    kind: 'cell',
    label: cellLabel(panel, cell),
    text: cell.model.sharedModel.getSource(),
    path: panel.context.path,
    cell_id: cell.model.id,
    language
  };
  return output ? { ...item, output } : item;
}

/** The notebook's language (for the fence), when its kernel has said which. */
function kernelLanguage(panel: NotebookPanel): string | undefined {
  const info = panel.content.model?.getMetadata('language_info') as { name?: string } | undefined;
  return info?.name || undefined;
}

class NotebookSources implements IAttachmentSources {
  constructor(
    private _app: JupyterFrontEnd,
    private _tracker: INotebookTracker,
    private _docs: IDocumentManager | null,
    private _client: HermesClient
  ) {
    this.mentions = new NotebookMentions(_app.serviceManager.contents, _tracker, _client);
  }

  readonly mentions: IMentionSource;

  available(): AttachmentKind[] {
    const kinds: AttachmentKind[] = this._docs ? ['file'] : [];
    const panel = this._tracker.currentWidget;
    if (panel) {
      kinds.push('cell', 'selection');
      if (panel.sessionContext.session?.kernel) {
        kinds.push('variable');
      }
    }
    return kinds;
  }

  async pick(kind: AttachmentKind): Promise<IAttachment | null> {
    const panel = this._tracker.currentWidget;
    const cell = this._tracker.activeCell;
    switch (kind) {
      case 'cell':
        return panel && cell ? cellAttachment(panel, cell) : null;
      case 'selection':
        return panel && cell ? selection(panel, cell) : null;
      case 'file':
        return this._file();
      case 'variable':
        return panel ? variable(panel, this._client) : null;
    }
  }

  private async _file(): Promise<IAttachment | null> {
    if (!this._docs) {
      return null;
    }
    const result = await FileDialog.getOpenFiles({ manager: this._docs, title: 'Attach a file to the message' });
    const chosen = result.button.accept ? result.value?.find(item => item.type !== 'directory') : undefined;
    if (!chosen) {
      return null;
    }
    return fileAttachment(this._app.serviceManager.contents, chosen.path, chosen.name);
  }
}

/** A text file from the server as an attachment (null: not text). */
export async function fileAttachment(contents: Contents.IManager, path: string, name: string): Promise<IAttachment | null> {
  const model = await contents.get(path, { type: 'file', format: 'text', content: true });
  if (typeof model.content !== 'string') {
    return null;
  }
  return { kind: 'file', label: name, text: model.content, path };
}

/** A variable as the server summarizes it (shape, dtypes, head…): the picker's and `@`'s attachment. */
export async function variableAttachment(client: HermesClient, path: string, name: string): Promise<IAttachment> {
  const shown = await client.describeVariable(path, name);
  return { kind: 'variable', label: name, text: shown.text, path };
}

/**
 * What `@` names: the kernel's variables and the cells of the notebook in front, and the files in
 * its folder (the server root without a notebook). A kind that cannot be read is left out.
 */
class NotebookMentions implements IMentionSource {
  constructor(
    private _contents: Contents.IManager,
    private _tracker: INotebookTracker,
    private _client: HermesClient
  ) {}

  async mentions(): Promise<IMention[]> {
    const panel = this._tracker.currentWidget;
    const [variables, files] = await Promise.all([
      panel?.sessionContext.session?.kernel ? this._variables(panel.context.path) : [],
      this._files(panel ? PathExt.dirname(panel.context.path) : '')
    ]);
    const cells = panel
      ? panel.content.widgets.map((cell, i) =>
          cellMention(panel.context.path, cell.model.id, i, cell.model.sharedModel.getSource(), cellLabel(panel, cell))
        )
      : [];
    return [...variables, ...cells, ...files];
  }

  async attach(mention: IMention): Promise<IAttachment | null> {
    switch (mention.kind) {
      case 'variable':
        return mention.notebook ? variableAttachment(this._client, mention.notebook, mention.key) : null;
      case 'file':
        return fileAttachment(this._contents, mention.key, mention.label);
      case 'cell': {
        const panel = this._tracker.find(p => p.context.path === mention.notebook);
        const cell = panel?.content.widgets.find(c => c.model.id === mention.key);
        return panel && cell ? cellAttachment(panel, cell) : null;
      }
    }
  }

  private async _variables(path: string): Promise<IMention[]> {
    try {
      const listing = await this._client.listVariables(path);
      return listing.variables.map(row => ({
        kind: 'variable' as const,
        key: row.name,
        notebook: path,
        label: row.name,
        detail: row.size ? `${row.type} · ${row.size}` : row.type,
        word: row.name
      }));
    } catch {
      return []; // no kernel yet, or a busy one: `@` still offers cells and files
    }
  }

  private async _files(folder: string): Promise<IMention[]> {
    try {
      const listing = await this._contents.get(folder, { content: true });
      const items = Array.isArray(listing.content) ? (listing.content as Contents.IModel[]) : [];
      return items
        .filter(item => item.type !== 'directory')
        .map(item => ({
          kind: 'file' as const,
          key: item.path,
          label: item.name,
          detail: item.type === 'notebook' ? 'notebook' : undefined,
          word: item.name
        }));
    } catch {
      return [];
    }
  }
}

function selection(panel: NotebookPanel, cell: Cell): IAttachment | null {
  const editor = cell.editor;
  if (!editor) {
    return null;
  }
  const range = editor.getSelection();
  const start = editor.getOffsetAt(range.start);
  const end = editor.getOffsetAt(range.end);
  const text = cell.model.sharedModel.getSource().slice(Math.min(start, end), Math.max(start, end));
  if (!text.trim()) {
    return null;
  }
  const lines = text.split('\n').length;
  return {
    kind: 'selection',
    label: `${lines} line${lines === 1 ? '' : 's'} of ${cellLabel(panel, cell)}`,
    text,
    path: panel.context.path,
    cell_id: cell.model.id,
    language: cell.model.type === 'code' ? kernelLanguage(panel) : undefined
  };
}

/** Attach a variable chosen in the picker: its summary as the server gives it (shape, dtypes, head…). */
async function variable(panel: NotebookPanel, client: HermesClient): Promise<IAttachment | null> {
  if (!panel.sessionContext.session?.kernel) {
    return null;
  }
  const path = panel.context.path;
  const name = await pickVariable(client, path);
  return name ? variableAttachment(client, path, name) : null;
}

/** The picker in a dialog: the chosen variable's name, or null when cancelled. */
async function pickVariable(client: HermesClient, path: string): Promise<string | null> {
  const body = new PickerBody(() => client.listVariables(path));
  const dialog = new Dialog({
    title: 'Attach a variable',
    body,
    buttons: [Dialog.cancelButton(), Dialog.okButton({ label: 'Attach' })],
    focusNodeSelector: '.jp-HermesVariables-row'
  });
  body.choose = () => dialog.resolve(1);
  const result = await dialog.launch();
  return result.button.accept ? result.value : null;
}

class PickerBody extends ReactWidget implements Dialog.IBodyWidget<string | null> {
  constructor(private _load: () => Promise<IVariableListing>) {
    super();
    this.addClass('jp-HermesVariables-dialog');
  }

  choose: () => void = () => undefined;

  getValue(): string | null {
    return this._selected;
  }

  render(): JSX.Element {
    return React.createElement(VariablePicker, {
      load: this._load,
      onSelect: (name: string | null) => (this._selected = name),
      onChoose: (name: string) => {
        this._selected = name;
        this.choose();
      }
    });
  }

  private _selected: string | null = null;
}
