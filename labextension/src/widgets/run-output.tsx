/**
 * RunOutputRenderer: the IRenderMime.IRenderer of `application/vnd.hermes.run+json`.
 *
 * It shows the run's journal from the server and, while the run is live,
 * follows its stream by run_id: no kernel needed. Views of one run share its
 * follower (`FollowerPool`), so a view created again keeps what it showed.
 *
 * When a run it saw unfinished settles, the output is finished by exactly one
 * writer: alone, this renderer writes the server's bundle (from the verdict)
 * into the output model, so the next save keeps exactly what the server renders;
 * in a notebook shared under real-time collaboration it never writes, and asks
 * the server (which writes through the room) if the kernel has not done so.
 */
import type { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import type { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { ReactWidget } from '@jupyterlab/ui-components';
import React from 'react';

import { HermesClient } from '../api/client';
import { IRunOutputPayload, MimeBundle, isFinalStatus } from '../api/contract';
import { RunView } from '../components/run-output/run-view';
import { FollowerPool } from '../model/follower-pool';
import { RunFollower } from '../model/run-follower';
import { readRunPayload, savedText } from '../model/run-output';
import { ServerRecovery } from '../model/server-recovery';

/**
 * Milliseconds a shared notebook's output waits, after its run settled, for its own
 * writer (the kernel's final display) before the server is asked to finish it.
 */
export const SHARED_WRITER_WAIT_MS = 3000;

export interface IRunOutputOptions {
  client: HermesClient;
  rendermime: IRenderMimeRegistry;
  followers: FollowerPool;
  recovery: ServerRecovery;
  /** Real-time collaboration is on in this page: outputs are finished by the kernel or the server only. */
  shared?: () => boolean;
  /** The server-relative path of the notebook holding this output (null while unknown, e.g. not attached). */
  notebookPath?: (renderer: RunOutputRenderer) => string | null;
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
    const data = model.data as MimeBundle;
    this._saved = savedText(data);
    const payload = readRunPayload(data);
    this._payload = payload;
    if (!payload) {
      this._setFollower(null);
    } else if (this._follower?.runId !== payload.run_id) {
      const followers = this._options.followers;
      const follower = followers.acquire(payload.run_id, !isFinalStatus(payload.status));
      const last = followers.lastView(payload.run_id);
      if (last !== null && !this.node.hasChildNodes()) {
        // The same run's view, replaced a moment ago: show it until React has rendered this one,
        // so the cells below do not jump and the text never looks shorter.
        this.node.innerHTML = last;
      }
      this._setFollower(follower);
      follower.changed.connect(this._onFollowerChanged, this);
      this._onFollowerChanged(follower); // a shared follower may have ended already
    }
    this._followParts(payload);
    this.update();
  }

  /**
   * A live continuation shows the part it continues first, as the server's bundle does once it
   * ended (transcript/chain.py): one rendering of the answer, live and final alike.
   */
  private _followParts(payload: IRunOutputPayload | null): void {
    const live = !!payload?.continues && !isFinalStatus(payload.status);
    if (live && !this._earlier) {
      this._parts = this._options.followers.acquire(payload!.continues!, false);
      this._parts.changed.connect(this.update, this);
    } else if (!live && this._parts) {
      this._parts.changed.disconnect(this.update, this);
      this._options.followers.release(this._parts);
      this._parts = null;
    }
  }

  dispose(): void {
    if (this._follower && !this.isDisposed) {
      this._options.followers.rememberView(this._follower.runId, this.node.innerHTML);
    }
    this._setFollower(null);
    this._followParts(null);
    this._earlier?.dispose();
    this._earlier = null;
    super.dispose();
  }

  protected render(): JSX.Element {
    return (
      <RunView
        follower={this._follower}
        payload={this._payload}
        savedMarkdown={this._saved}
        rendermime={this._options.rendermime}
        earlier={this._earlier ?? this._parts}
        onContinue={() => this._continue()}
      />
    );
  }

  private _onFollowerChanged(follower: RunFollower): void {
    if (follower === this._follower && follower.state === 'ended' && !this._writing) {
      this._writing = true;
      void this._writeBundle(follower).finally(() => (this._writing = false));
    }
  }

  /** The run this output saw unfinished has settled: write the server's bundle, once. */
  private async _writeBundle(follower: RunFollower): Promise<void> {
    const unfinished = () => {
      const current = readRunPayload(this._model?.data as MimeBundle);
      return !!current && current.run_id === follower.runId && !isFinalStatus(current.status);
    };
    if (!unfinished() || !isFinalStatus(follower.status)) {
      return;
    }
    if (this._options.shared?.() === true) {
      // Shared notebook: never write here (a second writer duplicates the output in the room).
      await new Promise(resolve => setTimeout(resolve, SHARED_WRITER_WAIT_MS));
      const path = this._options.notebookPath?.(this) ?? null;
      if (path !== null && !this.isDisposed && follower === this._follower && unfinished()) {
        await this._options.recovery.request(path);
      }
      return;
    }
    let bundle: MimeBundle;
    try {
      bundle = await follower.bundle();
    } catch (error) {
      console.warn(`hermes-jupyter: no bundle for run ${follower.runId}`, error);
      return;
    }
    if (this._model && follower === this._follower && unfinished()) {
      this._model.setData({ data: bundle as never });
      this._options.onFinalWritten?.(this);
    }
  }

  /**
   * Continue this cell's answer: the new run's bundle (the server's whole answer so far)
   * replaces the output, which then follows it; the answer it continues stays shown above.
   */
  private async _continue(): Promise<void> {
    const sessionId = this._payload?.session_id;
    if (!sessionId || !this._model) {
      return;
    }
    const started = await this._options.client.continueSession(sessionId);
    const bundle = await this._options.client.getRunBundle(started.run_id);
    this._followParts(null);
    this._earlier?.dispose();
    this._earlier = this._follower;
    this._follower = null; // kept as `_earlier`, not disposed
    this._model.setData({ data: bundle as never });
  }

  private _setFollower(follower: RunFollower | null): void {
    if (this._follower && this._follower !== follower) {
      this._follower.changed.disconnect(this._onFollowerChanged, this);
      this._options.followers.release(this._follower);
    }
    this._follower = follower;
  }

  private _model: IRenderMime.IMimeModel | null = null;
  private _payload: IRunOutputPayload | null = null;
  private _saved = '';
  private _writing = false;
  private _follower: RunFollower | null = null;
  private _earlier: RunFollower | null = null;
  /** The part a live continuation continues (shown first while it streams). */
  private _parts: RunFollower | null = null;
}
