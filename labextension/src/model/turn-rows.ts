/**
 * Settled turns → display rows: each stored turn's user row, then the rows the server's fold made of
 * its run (docs/transcript.md, "Stored turns"). Pure; nothing is translated back from the model's history.
 */
import { IStoredTurn } from '../api/contract';
import { DisplayRow, IUserRow } from '../api/rows';

export function turnRows(turns: readonly IStoredTurn[]): DisplayRow[] {
  const rows: DisplayRow[] = [];
  for (const turn of turns) {
    const user = userRow(turn);
    if (user) {
      rows.push(user);
    }
    rows.push(...replyRows(turn));
  }
  return rows;
}

/**
 * The fold's rows of a turn, its replies tagged as the sidebar says them: `partial` when the person
 * stopped the turn (what arrived is kept), `recovered` when recovery rebuilt the turn from the run
 * journal after a server restart (the user's row says so, or the marker's cause does).
 */
function replyRows(turn: IStoredTurn): DisplayRow[] {
  const rows: DisplayRow[] = turn.rows ?? [];
  const partial = turn.status === 'cancelled';
  const recovered =
    turn.user?.recovered === true || rows.some(row => row.kind === 'marker' && row.cause === 'server_restart');
  if (!partial && !recovered) {
    return rows;
  }
  return rows.map(row => (row.kind === 'assistant' ? { ...row, partial, recovered } : row));
}

function userRow(turn: IStoredTurn): IUserRow | null {
  const user = turn.user;
  if (!user) {
    return null; // a continuation sends no message
  }
  const row: IUserRow = { kind: 'user', id: user.id || `${turn.run_id}:user`, text: user.text ?? '' };
  if (user.attachments?.length) {
    row.attachments = user.attachments;
  }
  if (user.recovered === true) {
    row.recovered = true;
  }
  return row;
}

/** The turn of a run, put where it belongs: an earlier copy of it is replaced, else it is appended. */
export function withTurn(turns: readonly IStoredTurn[], turn: IStoredTurn): IStoredTurn[] {
  const at = turns.findIndex(t => t.run_id === turn.run_id);
  return at < 0 ? [...turns, turn] : [...turns.slice(0, at), turn, ...turns.slice(at + 1)];
}

/** True if a turn in these rows was recovered after a server restart (the sidebar's banner). */
export function recoveredAfterRestart(rows: readonly DisplayRow[]): boolean {
  return rows.some(
    row =>
      (row.kind === 'user' && row.recovered === true) ||
      (row.kind === 'marker' && row.cause === 'server_restart')
  );
}
