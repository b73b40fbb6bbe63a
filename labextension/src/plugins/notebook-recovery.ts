/**
 * Notebook recovery: when a notebook opens, and when its kernel restarts or
 * dies, every hermes output whose status is not final and whose run has
 * settled gets the server's bundle (the same bytes `jupyter hermes recover` and
 * `POST notebooks/recover` write), and the notebook is marked dirty so that a
 * save keeps the result.
 *
 * In a notebook shared under real-time collaboration the browser writes nothing:
 * it asks the server, which writes through the room's shared document once per
 * run however many collaborators ask (`ServerRecovery`).
 */
import { JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import type { ICodeCellModel } from '@jupyterlab/cells';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';

import { HermesClient } from '../api/client';
import { MimeBundle, isFinalStatus } from '../api/contract';
import { isUnfinishedRun, readRunPayload, settledBundle } from '../model/run-output';
import { ServerRecovery } from '../model/server-recovery';
import { sharedNotebookPath } from '../model/shared-notebook';
import { IHermesConnection } from '../tokens';

/**
 * Delays (ms) of the scans after a kernel restart: the server settles the runs
 * bound to the old kernel shortly after it sees the restart.
 */
const RESTART_SCAN_DELAYS_MS = [500, 1500, 3000, 6000, 12000];

export class NotebookRecovery {
  constructor(
    private _client: HermesClient,
    private _server = new ServerRecovery(_client)
  ) {}

  /** Watch a notebook: scan once it is loaded, and again after kernel restarts. */
  track(panel: NotebookPanel): void {
    void panel.context.ready.then(() => this.scan(panel));
    panel.sessionContext.statusChanged.connect((_, status) => {
      if (status === 'restarting' || status === 'autorestarting' || status === 'dead') {
        void this._scanAfterRestart(panel);
      }
    });
  }

  /**
   * Write the server's bundle into the unfinished hermes outputs of `panel` whose runs have settled.
   * Returns how many unfinished outputs are still live on the server.
   */
  async scan(panel: NotebookPanel): Promise<number> {
    const model = panel.model;
    if (!model || panel.isDisposed) {
      return 0;
    }
    const shared = sharedNotebookPath(panel);
    let changed = 0;
    let live = 0;
    let settled = 0;
    for (const cell of model.cells) {
      if (cell.type !== 'code') {
        continue;
      }
      const outputs = (cell as ICodeCellModel).outputs;
      for (let i = 0; i < outputs.length; i++) {
        const output = outputs.get(i);
        const payload = readRunPayload(output.data as MimeBundle);
        if (!payload || isFinalStatus(payload.status)) {
          continue;
        }
        let bundle: MimeBundle | null = null;
        try {
          bundle = await settledBundle(this._client, payload.run_id);
        } catch (error) {
          console.warn(`hermes-jupyter: cannot recover run ${payload.run_id}`, error);
        }
        if (!bundle) {
          live++;
          continue;
        }
        if (shared !== null) {
          settled++; // the server writes it, through the room
          continue;
        }
        // The cell may have changed while we waited: write only into the same output.
        if (outputs.get(i) === output && isUnfinishedRun(output.data as MimeBundle)) {
          output.setData({ data: bundle as never });
          changed++;
        }
      }
    }
    if (shared !== null && settled > 0) {
      await this._server.request(shared);
    }
    if (changed > 0 && !panel.isDisposed) {
      model.dirty = true;
    }
    return live;
  }

  private async _scanAfterRestart(panel: NotebookPanel): Promise<void> {
    if (this._restartScans.has(panel)) {
      return;
    }
    this._restartScans.add(panel);
    try {
      for (const delay of RESTART_SCAN_DELAYS_MS) {
        await new Promise(resolve => setTimeout(resolve, delay));
        if (panel.isDisposed || (await this.scan(panel)) === 0) {
          return;
        }
      }
    } finally {
      this._restartScans.delete(panel);
    }
  }

  private _restartScans = new Set<NotebookPanel>();
}

export const notebookRecoveryPlugin: JupyterFrontEndPlugin<void> = {
  id: 'hermes-jupyter:notebook-recovery',
  description: 'Rebuilds unfinished hermes outputs of open notebooks from the run journal.',
  autoStart: true,
  requires: [IHermesConnection, INotebookTracker],
  activate: (_app: JupyterFrontEnd, connection: IHermesConnection, tracker: INotebookTracker) => {
    const recovery = new NotebookRecovery(connection.client);
    tracker.forEach(panel => recovery.track(panel));
    tracker.widgetAdded.connect((_, panel) => recovery.track(panel));
  }
};
