/**
 * hermes-jupyter: the JupyterLab side of hermes-jupyter.
 */
import { JupyterFrontEndPlugin } from '@jupyterlab/application';

import { askHermesPlugin } from './plugins/ask-hermes';
import { cellBadgesPlugin } from './plugins/cell-badges';
import { cellChangesPlugin } from './plugins/cell-changes';
import { cellActionsPlugin } from './plugins/cell-actions';
import { codeActionsPlugin } from './plugins/code-actions';
import { connectionPlugin } from './plugins/connection';
import { editCellPlugin } from './plugins/edit-cell';
import { inlineCompletionPlugin } from './plugins/inline-completion';
import { notebookContextPlugin } from './plugins/notebook-context';
import { notebookRecoveryPlugin } from './plugins/notebook-recovery';
import { proposalsPlugin } from './plugins/proposals';
import { runRendererPlugin } from './plugins/run-renderer';
import { sidebarPlugin } from './plugins/sidebar';

const plugins: JupyterFrontEndPlugin<any>[] = [
  connectionPlugin,
  sidebarPlugin,
  runRendererPlugin,
  notebookRecoveryPlugin,
  proposalsPlugin,
  cellChangesPlugin,
  cellBadgesPlugin,
  notebookContextPlugin,
  askHermesPlugin,
  cellActionsPlugin,
  codeActionsPlugin,
  editCellPlugin,
  inlineCompletionPlugin
];

export default plugins;
