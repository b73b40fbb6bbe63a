/**
 * Copy / Insert below / Replace on every code block of an answer (sidebar and
 * notebook renderer alike). The notebook side is registered by the code-actions
 * plugin, which owns the notebook tracker; without it only Copy is offered.
 * Nothing inserted is ever executed. Copy says "Copied" for a moment, and a
 * live region says it to screen readers.
 */
import { Clipboard } from '@jupyterlab/apputils';

export interface INotebookCodeActions {
  /** Insert a code cell below the active cell; false when no notebook is open. */
  insertBelow(code: string): boolean;
  /** Replace the active cell's source; false when no notebook is open. */
  replaceActive(code: string): boolean;
}

let notebook: INotebookCodeActions | null = null;

export function setNotebookCodeActions(actions: INotebookCodeActions | null): void {
  notebook = actions;
}

/** How long (ms) Copy reads "Copied" after a click. */
const COPIED_MS = 2000;

/** Code a block shows, without the trailing newline a fence leaves. */
function codeOf(pre: HTMLElement): string {
  return (pre.textContent ?? '').replace(/\n$/, '');
}

/** Put the action bar above each `pre` of a rendered answer (idempotent per render). */
export function addCodeActions(node: HTMLElement): void {
  node.querySelectorAll('pre').forEach(pre => {
    const previous = pre.previousElementSibling;
    if (previous && previous.classList.contains('jp-HermesCodeActions')) {
      return;
    }
    const bar = document.createElement('div');
    bar.className = 'jp-HermesCodeActions';
    bar.setAttribute('role', 'toolbar');
    bar.setAttribute('aria-label', 'Code block actions');
    const status = document.createElement('span');
    status.className = 'jp-HermesCodeActions-status';
    status.setAttribute('aria-live', 'polite');
    status.dataset.testid = 'hermes-code-status';
    bar.appendChild(status);
    bar.appendChild(
      actionButton('Copy', 'copy', 'Copy the code', button => {
        Clipboard.copyToSystem(codeOf(pre));
        confirmCopied(button, status);
      })
    );
    if (notebook) {
      const actions = notebook;
      bar.appendChild(
        actionButton('Insert below', 'insert', 'Insert the code as a new cell below the active cell (not run)', () =>
          actions.insertBelow(codeOf(pre))
        )
      );
      bar.appendChild(
        actionButton('Replace cell', 'replace', "Replace the active cell's source with the code (not run)", () =>
          actions.replaceActive(codeOf(pre))
        )
      );
    }
    pre.parentElement?.insertBefore(bar, pre);
  });
}

/** Copy reads "Copied" for a moment; the live region says so once (cleared, so a second copy is said again). */
function confirmCopied(button: HTMLButtonElement, status: HTMLElement): void {
  button.textContent = 'Copied';
  button.dataset.copied = 'true';
  status.textContent = 'Code copied to the clipboard.';
  window.clearTimeout(Number(button.dataset.copiedTimer ?? 0));
  button.dataset.copiedTimer = String(
    window.setTimeout(() => {
      button.textContent = 'Copy';
      delete button.dataset.copied;
      status.textContent = '';
    }, COPIED_MS)
  );
}

function actionButton(
  label: string,
  action: string,
  title: string,
  run: (button: HTMLButtonElement) => unknown
): HTMLButtonElement {
  const button = document.createElement('button');
  button.className = 'jp-HermesCodeActions-button';
  button.dataset.testid = `hermes-code-${action}`;
  button.textContent = label;
  button.title = title;
  button.type = 'button';
  button.onclick = event => {
    event.preventDefault();
    event.stopPropagation();
    if (run(button) === false) {
      button.title = 'Open a notebook and select a cell first';
    }
  };
  return button;
}
