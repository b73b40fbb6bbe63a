/**
 * The run-output renderer: `application/vnd.hermes.run+json` outputs render
 * from the server's journal and follow live runs without a kernel.
 *
 * It ranks ahead of the ipywidgets view (rank -10) that the same bundle
 * carries while streaming, so a reopened notebook never shows "model not found".
 * Every view of a run in this page, the sidebar's included, shares one follower
 * (the connection's `FollowerPool`).
 */
import { JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import type { IRenderMime } from '@jupyterlab/rendermime-interfaces';

import { RUN_MIME_TYPE } from '../api/contract';
import { ServerRecovery } from '../model/server-recovery';
import { collaborationOn } from '../model/shared-notebook';
import { IHermesConnection } from '../tokens';
import { RunOutputRenderer } from '../widgets/run-output';

/** Our rank: below (preferred to) the ipywidgets view's -10. */
export const RUN_RENDERER_RANK = -20;

export const runRendererPlugin: JupyterFrontEndPlugin<void> = {
  id: 'hermes-jupyter:run-renderer',
  description: 'Renders hermes run outputs and re-attaches to live runs.',
  autoStart: true,
  requires: [IHermesConnection, IRenderMimeRegistry],
  optional: [INotebookTracker],
  activate: (
    _app: JupyterFrontEnd,
    connection: IHermesConnection,
    rendermime: IRenderMimeRegistry,
    tracker: INotebookTracker | null
  ) => {
    const { client, followers } = connection;
    const recovery = new ServerRecovery(client);
    const panelOf = (renderer: RunOutputRenderer): NotebookPanel | null =>
      tracker?.find(panel => panel.node.contains(renderer.node)) ?? null;
    const markDirty = (renderer: RunOutputRenderer) => {
      const model = panelOf(renderer)?.model;
      if (model) {
        model.dirty = true;
      }
    };
    const notebookPath = (renderer: RunOutputRenderer) => panelOf(renderer)?.context.localPath ?? null;
    const shared = () => collaborationOn(tracker);
    const factory: IRenderMime.IRendererFactory = {
      safe: true,
      mimeTypes: [RUN_MIME_TYPE],
      defaultRank: RUN_RENDERER_RANK,
      createRenderer: () =>
        new RunOutputRenderer({
          client,
          rendermime,
          followers,
          recovery,
          shared,
          notebookPath,
          onFinalWritten: markDirty
        })
    };
    rendermime.addFactory(factory, RUN_RENDERER_RANK);
    // Notebooks opened before this plugin cloned the registry without us.
    const ensure = (registry: IRenderMimeRegistry) => {
      if (!registry.mimeTypes.includes(RUN_MIME_TYPE)) {
        registry.addFactory(factory, RUN_RENDERER_RANK);
      }
    };
    tracker?.forEach(panel => ensure(panel.content.rendermime));
    tracker?.widgetAdded.connect((_, panel) => ensure(panel.content.rendermime));
  }
};
