/**
 * The notebook half of the code-block actions: Insert below and Replace act on
 * the active cell of the current notebook, through its shared model, never executed.
 */
import { JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { INotebookTracker } from '@jupyterlab/notebook';

import { setNotebookCodeActions } from '../components/messages/code-actions';
import { insertCell } from '../model/notebook-edits';

export const codeActionsPlugin: JupyterFrontEndPlugin<void> = {
  id: 'hermes-jupyter:code-actions',
  description: 'Insert or replace notebook cells from code blocks in Hermes answers.',
  autoStart: true,
  requires: [INotebookTracker],
  activate: (_app: JupyterFrontEnd, tracker: INotebookTracker) => {
    setNotebookCodeActions({
      insertBelow: code => {
        const panel = tracker.currentWidget;
        if (!panel) {
          return false;
        }
        insertCell(panel, panel.content.activeCellIndex + 1, 'code', code);
        return true;
      },
      replaceActive: code => {
        const cell = tracker.activeCell;
        if (!cell) {
          return false;
        }
        cell.model.sharedModel.setSource(code);
        return true;
      }
    });
  }
};
