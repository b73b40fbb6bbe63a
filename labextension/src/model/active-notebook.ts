/**
 * ActiveNotebook: the notebook the user is working in (the tracker's current one), its path and
 * kernel, so the sidebar can offer to bind the selected session to it. A session bound to a
 * notebook gives every run the notebook tools, whoever starts it (the server owns that rule).
 */
import type { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { IDisposable } from '@lumino/disposable';
import { ISignal, Signal } from '@lumino/signaling';

import { ISessionSummary } from '../api/contract';

export interface INotebookRef {
  /** Server-relative path, as sessions store it. */
  path: string;
  /** The file name, for labels. */
  name: string;
  /** The notebook's running kernel, if it has one. */
  kernelId: string | null;
}

/**
 * Whether a session is bound to this notebook. The binding follows the notebook, not a kernel id:
 * the server gives each run the notebook's kernel of the moment (a restart, Shut Down Kernel and a
 * new kernel, a server restart), so a stored kernel id that is no longer the notebook's is no reason
 * to bind again.
 */
export function isBoundTo(session: ISessionSummary, notebook: INotebookRef): boolean {
  return session.notebook_path === notebook.path;
}

/** The fields of `POST sessions` that bind a new session to the notebook in front (none without one). */
export function bindingOf(notebook: INotebookRef | null): { notebook_path?: string; kernel_id?: string } {
  if (!notebook) {
    return {};
  }
  return notebook.kernelId ? { notebook_path: notebook.path, kernel_id: notebook.kernelId } : { notebook_path: notebook.path };
}

export class ActiveNotebook implements IDisposable {
  constructor(private _tracker: INotebookTracker | null) {
    _tracker?.currentChanged.connect(this._follow, this);
    this._follow();
  }

  get current(): INotebookRef | null {
    const panel = this._panel;
    if (!panel || panel.isDisposed) {
      return null;
    }
    const path = panel.context.path;
    return { path, name: path.split('/').pop() || path, kernelId: panel.sessionContext.session?.kernel?.id ?? null };
  }

  get changed(): ISignal<this, void> {
    return this._changed;
  }

  get isDisposed(): boolean {
    return this._disposed;
  }

  dispose(): void {
    if (this._disposed) {
      return;
    }
    this._disposed = true;
    this._watch(null);
    Signal.clearData(this);
  }

  private _follow(): void {
    this._watch(this._tracker?.currentWidget ?? null);
    this._changed.emit();
  }

  /** Follow one panel's renames and kernel changes (a restart keeps the kernel id; a new kernel does not). */
  private _watch(panel: NotebookPanel | null): void {
    if (this._panel) {
      this._panel.context.pathChanged.disconnect(this._emit, this);
      this._panel.sessionContext.kernelChanged.disconnect(this._emit, this);
    }
    this._panel = panel;
    panel?.context.pathChanged.connect(this._emit, this);
    panel?.sessionContext.kernelChanged.connect(this._emit, this);
  }

  private _emit(): void {
    this._changed.emit();
  }

  private _panel: NotebookPanel | null = null;
  private _disposed = false;
  private _changed = new Signal<this, void>(this);
}
