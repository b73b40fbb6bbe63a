/**
 * Is a notebook shared under real-time collaboration (jupyter-collaboration)?
 *
 * Its model is then backed by the room's shared document: every edit reaches
 * every collaborator, so a hermes output must have one writer (docs/collaboration.md).
 */
import { PageConfig } from '@jupyterlab/coreutils';
import type { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';

/** The server-relative path of `panel`'s notebook when it is shared, else null. */
export function sharedNotebookPath(panel: NotebookPanel | null | undefined): string | null {
  if (!panel || panel.isDisposed || !(panel.model?.collaborative || serverHasRooms())) {
    return null;
  }
  return panel.context.localPath;
}

/**
 * Real-time collaboration is on in this page: its server has rooms (jupyter-collaboration puts
 * `disableRTC: false` in the page config) or an open notebook is shared. Decided for the page, not
 * per output, so a view not yet attached to its notebook never takes itself for the only writer.
 */
export function collaborationOn(tracker: INotebookTracker | null): boolean {
  return serverHasRooms() || !!tracker?.find(panel => !!panel.model?.collaborative);
}

/** jupyter-collaboration's server extension is on (it writes `disableRTC: false` in the page config). */
function serverHasRooms(): boolean {
  return PageConfig.getOption('disableRTC') === 'false';
}
