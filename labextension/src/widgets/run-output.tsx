/**
 * RunOutputRenderer: the IRenderMime.IRenderer of `application/vnd.hermes.run+json`.
 *
 * It shows the run's journal from the server and, while the run is live,
 * follows its stream by run_id: no kernel needed. When a run it saw unfinished
 * ends, it writes the final static bundle into the output model, so the next
 * save of the notebook keeps it.
 */
import type { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import type { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { ReactWidget } from '@jupyterlab/ui-components';
import React from 'react';

import { HermesClient } from '../api/client';
import { IRunOutputPayload, isFinalStatus } from '../api/contract';
import { RunView } from '../components/run-output/run-view';
import { buildRunBundle, readRunPayload } from '../model/run-bundle';
import { RunFollower } from '../model/run-follower';

export interface IRunOutputOptions {
  client: HermesClient;
  rendermime: IRenderMimeRegistry;
  /** Called after the final bundle was written into the model. */
  onFinalWritten?: (renderer: RunOutputRenderer) => void;
}

export class RunOutputRenderer extends ReactWidget implements IRenderMime.IRenderer {
  constructor(private _options: IRunOutputOptions) {
    super();
    this.addClass('jp-HermesRunOutput');
  }

  async renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    this._model = model;
    const data = model.data as { [mime: string]: unknown };
    const markdown = data['text/markdown'] ?? data['text/plain'];
    this._saved = typeof markdown === 'string' ? markdown : '';
    const payload = readRunPayload(data);
    this._payload = payload;
    if (!payload) {
      this._setFollower(null);
    } else if (this._follower?.runId !== payload.run_id) {
      const follower = new RunFollower({
        client: this._options.client,
        runId: payload.run_id,
        live: !isFinalStatus(payload.status)
      });
      this._setFollower(follower);
      follower.changed.connect(this._onFollowerChanged, this);
      void follower.start();
    }
    this.update();
  }

  dispose(): void {
    this._setFollower(null);
    super.dispose();
  }

  protected render(): JSX.Element {
    return (
      <RunView
        follower={this._follower}
        runId={this._payload?.run_id ?? ''}
        savedMarkdown={this._saved}
        rendermime={this._options.rendermime}
      />
    );
  }

  private _onFollowerChanged(follower: RunFollower): void {
    if (follower !== this._follower || follower.state !== 'ended') {
      return;
    }
    const model = this._model;
    const current = readRunPayload(model?.data as { [mime: string]: unknown });
    if (!model || !current || current.run_id !== follower.runId || isFinalStatus(current.status)) {
      return;
    }
    const payload: IRunOutputPayload = {
      run_id: follower.runId,
      session_id: follower.sessionId ?? current.session_id,
      seq: current.seq,
      status: follower.status
    };
    model.setData({ data: buildRunBundle(payload, follower.transcript) as never });
    this._options.onFinalWritten?.(this);
  }

  private _setFollower(follower: RunFollower | null): void {
    if (this._follower && this._follower !== follower) {
      this._follower.dispose();
    }
    this._follower = follower;
  }

  private _model: IRenderMime.IMimeModel | null = null;
  private _payload: IRunOutputPayload | null = null;
  private _saved = '';
  private _follower: RunFollower | null = null;
}
