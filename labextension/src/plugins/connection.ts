/**
 * The page's one connection to the Hermes server: a client and the run followers every view shares
 * (IHermesConnection), so the sidebar and the notebook outputs of a run read it over one stream.
 */
import { JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';

import { HermesClient } from '../api/client';
import { FollowerPool } from '../model/follower-pool';
import { IHermesConnection } from '../tokens';

export const connectionPlugin: JupyterFrontEndPlugin<IHermesConnection> = {
  id: 'hermes-jupyter:connection',
  description: 'The Hermes server client and the run followers its views share.',
  autoStart: true,
  provides: IHermesConnection,
  activate: (app: JupyterFrontEnd): IHermesConnection => {
    const client = new HermesClient(app.serviceManager.serverSettings);
    return { client, followers: new FollowerPool(client) };
  }
};
