/**
 * Where the keyboard goes between the notebook and the Hermes sidebar (docs/sidebar.md, "Keyboard"):
 * the shortcut puts the caret in the composer, and pressed again there (or Escape in an idle
 * composer) gives it back to the notebook's active cell.
 */
import type { JupyterFrontEnd } from '@jupyterlab/application';
import type { INotebookTracker } from '@jupyterlab/notebook';

/** How long (ms) the shortcut keeps the caret in the composer while the panel settles. */
const FOCUS_MS = 5000;

/** Ends the composer's hold on the caret, if one is running. */
let endHold: (() => void) | null = null;

const composerOf = (node: HTMLElement) => node.querySelector<HTMLTextAreaElement>('.jp-HermesComposer-input');

/** The caret is somewhere in the sidebar (the composer, a button of an answer, …). */
export function sidebarHasFocus(node: HTMLElement): boolean {
  const active = document.activeElement;
  return !!active && active !== document.body && node.contains(active);
}

/**
 * Give the focus to the notebook in front (its active cell, in the mode it was in); false when no
 * notebook is open, and the caret stays where it is.
 */
export function focusNotebook(app: JupyterFrontEnd, notebooks: INotebookTracker | null): boolean {
  const panel = notebooks?.currentWidget;
  if (!panel) {
    return false;
  }
  endHold?.();
  app.shell.activateById(panel.id);
  panel.content.activate();
  return true;
}

/**
 * Once the panel is laid out (it may just have been shown), give the composer the focus, and keep
 * it there while the panel settles: the chat may re-render the composer while its sessions load
 * (the focus drops to the page body), and on a slow machine the shell may still be acting on an
 * earlier click (activating the main area focuses it) after the composer had the caret. So until
 * `until`, any other holder of the focus gives it back, unless the person chose otherwise: a click
 * or a key press elsewhere, Tab or Escape in the composer (moving on from it), or any other command
 * run meanwhile (the palette, say), ends it at once.
 */
export function focusComposer(
  node: HTMLElement,
  commands: JupyterFrontEnd['commands'],
  ownCommands: readonly string[],
  until = Date.now() + FOCUS_MS
): void {
  endHold?.();
  let userMoved = false;
  const onUser = (event: Event) => {
    const target = event.target;
    const inComposer = target instanceof Node && !!composerOf(node)?.contains(target);
    const leaving = event instanceof KeyboardEvent && (event.key === 'Tab' || event.key === 'Escape');
    if (!inComposer || leaving) {
      userMoved = true;
    }
  };
  const onCommand = (_: unknown, args: { id: string }) => {
    if (!ownCommands.includes(args.id)) {
      userMoved = true;
    }
  };
  const stop = () => {
    document.removeEventListener('pointerdown', onUser, true);
    document.removeEventListener('keydown', onUser, true);
    commands.commandExecuted.disconnect(onCommand);
    if (endHold === end) {
      endHold = null;
    }
  };
  const end = () => {
    userMoved = true;
    stop();
  };
  endHold = end;
  document.addEventListener('pointerdown', onUser, true);
  document.addEventListener('keydown', onUser, true);
  commands.commandExecuted.connect(onCommand);
  const tick = () => {
    const box = composerOf(node);
    if (userMoved || Date.now() >= until) {
      stop();
      return;
    }
    if (box && document.activeElement !== box) {
      box.focus();
    }
    requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
}
