/**
 * Is a notebook shared under real-time collaboration (jupyter-collaboration)?
 *
 * Its model is then backed by the room's shared document: every edit reaches
 * every collaborator, so a hermes output must have one writer (docs/collaboration.md).
 */
import type { NotebookPanel } from '@jupyterlab/notebook';

/** The server-relative path of `panel`'s notebook when it is shared, else null. */
export function sharedNotebookPath(panel: NotebookPanel | null | undefined): string | null {
  if (!panel || panel.isDisposed || !panel.model?.collaborative) {
    return null;
  }
  return panel.context.localPath;
}
