/**
 * A turn about one notebook cell: "Ask Hermes" under an error, Explain and Fix
 * (cell toolbar, context menu). One builder makes all three requests (prompt +
 * the cell as an attachment, with its error output when there is one:
 * docs/attachments.md), and one rule says which session they go to: that
 * notebook's own (docs/sidebar.md, "Cells ask their notebook's session").
 */
import type { IAttachment, ISessionSummary } from '../api/contract';
import { INotebookRef, bindingOf } from './active-notebook';
import type { IChatModel } from './chat-model';
import type { SessionsModel } from './sessions';

export type CellAction = 'ask' | 'explain' | 'fix';

/** What each action asks; the cell (and its traceback) travel as an attachment. */
export const CELL_PROMPTS: Readonly<Record<CellAction, string>> = {
  ask: 'This cell failed. Explain the error and how to fix it.',
  explain: 'Explain this cell.',
  fix: 'Fix this cell.'
};

export interface ICellTurn {
  message: string;
  attachments: IAttachment[];
}

/** The part of an nbformat output this needs (a plain JSON output, as `toJSON()` gives it). */
export interface IOutputLike {
  output_type: string;
  ename?: string;
  evalue?: string;
  traceback?: readonly string[];
}

const ANSI = /\x1b\[[0-9;]*[A-Za-z]/g;

export function stripAnsi(text: string): string {
  return text.replace(ANSI, '');
}

/** The first error output's traceback without terminal colours (its name and value without one); null without an error. */
export function errorText(outputs: readonly IOutputLike[]): string | null {
  const error = outputs.find(output => output.output_type === 'error');
  if (!error) {
    return null;
  }
  return stripAnsi((error.traceback ?? []).join('\n')) || `${error.ename ?? 'Error'}: ${error.evalue ?? ''}`;
}

/** Cells that talk to Hermes themselves (`%%hermes`, `%hermes`) are not asked about. */
export function isHermesCell(source: string): boolean {
  return /^\s*%%?hermes\b/.test(source);
}

/**
 * The request for `action` on a cell (`cell`: its attachment, source only). Ask and Fix need an
 * error output (null without one); Explain sends the source alone.
 */
export function cellTurn(action: CellAction, cell: IAttachment, outputs: readonly IOutputLike[]): ICellTurn | null {
  if (action === 'explain') {
    return { message: CELL_PROMPTS.explain, attachments: [cell] };
  }
  const error = errorText(outputs);
  return error === null ? null : { message: CELL_PROMPTS[action], attachments: [{ ...cell, output: error }] };
}

/**
 * The session a cell's turn goes to: the notebook's own. The selected session when it is bound to
 * this notebook, else the notebook's newest session, else `'create'` (a new one bound to it) —
 * never a selected session of another notebook or of none.
 */
export function notebookTurnTarget(
  sessions: readonly ISessionSummary[],
  path: string,
  selectedId: string | null
): string | 'create' {
  const mine = sessions.filter(s => s.notebook_path === path);
  const selected = mine.find(s => s.session_id === selectedId);
  if (selected) {
    return selected.session_id;
  }
  const age = (s: ISessionSummary) => s.updated_at ?? s.created_at ?? 0;
  const newest = mine.reduce<ISessionSummary | null>((best, s) => (best === null || age(s) > age(best) ? s : best), null);
  return newest?.session_id ?? 'create';
}

/**
 * Send a cell's turn to its notebook's session (a new one bound to the notebook when it has none),
 * selecting it so the sidebar shows the turn. False when the turn was not accepted (`chat.error` says why).
 */
export async function sendToNotebook(
  sessions: SessionsModel,
  chat: IChatModel,
  notebook: INotebookRef,
  turn: ICellTurn
): Promise<boolean> {
  // the list as it is now (a session another tab or a %%hermes cell made); failing that, as last read
  await sessions.refresh().catch(() => undefined);
  const target = notebookTurnTarget(sessions.sessions, notebook.path, sessions.selectedId);
  const sessionId = target === 'create' ? await sessions.create(undefined, bindingOf(notebook)) : target;
  sessions.select(sessionId);
  await chat.open(sessionId);
  for (const attachment of turn.attachments) {
    chat.attachments.add(attachment);
  }
  return chat.send(turn.message);
}
