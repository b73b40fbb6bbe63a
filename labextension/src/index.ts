/**
 * hermes-jupyter: the JupyterLab side of hermes-jupyter.
 */
import { JupyterFrontEndPlugin } from '@jupyterlab/application';

import { notebookRecoveryPlugin } from './plugins/notebook-recovery';
import { runRendererPlugin } from './plugins/run-renderer';
import { sidebarPlugin } from './plugins/sidebar';

const plugins: JupyterFrontEndPlugin<any>[] = [
  sidebarPlugin,
  runRendererPlugin,
  notebookRecoveryPlugin
];

export default plugins;
