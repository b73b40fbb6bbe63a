/**
 * The sidebar follows the notebook in front of it: while nothing is selected,
 * it selects the current notebook's session (the one streaming, else the
 * newest), so every collaborator on a shared notebook sees its runs stream in
 * the sidebar, not only the one who ran the cell.
 */
import { ISessionSummary } from '../api/contract';
import { SessionsModel, isStreaming } from './sessions';

/** The session the sidebar shows for the notebook at `path`: the one streaming, else the newest (list order). */
export function notebookSession(
  sessions: readonly ISessionSummary[],
  path: string | null
): string | null {
  if (!path) {
    return null;
  }
  const mine = sessions.filter(s => s.notebook_path === path);
  return (mine.find(isStreaming) ?? mine[0])?.session_id ?? null;
}

/** Select the current notebook's session whenever nothing is selected. `currentPath` names that notebook. */
export function followNotebookSession(
  sessions: SessionsModel,
  currentPath: () => string | null
): () => void {
  const follow = () => {
    if (sessions.selectedId === null) {
      const sid = notebookSession(sessions.sessions, currentPath());
      if (sid !== null) {
        sessions.select(sid);
      }
    }
  };
  sessions.changed.connect(follow);
  return follow;
}
