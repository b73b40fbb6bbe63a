/**
 * Which answer a Continue button belongs to: the session's last one, when it
 * ended interrupted, stopped, cut off or at the model's length limit, and nothing
 * runs (the server continues only that turn: docs/api.md). Pure.
 */
import { DisplayRow, IMarkerRow } from '../api/rows';

/** Error kinds that leave an answer worth continuing (runs/continuation.py CONTINUABLE_ERRORS). */
const CONTINUABLE_ERRORS: ReadonlySet<string | null> = new Set(['stream_cut', 'length_limit']);

function continuable(row: IMarkerRow): boolean {
  return row.variant === 'interrupted' || row.variant === 'cancelled' || CONTINUABLE_ERRORS.has(row.cause);
}

/** `rows` with the closing marker flagged `continuable` when `idle` and that marker ends the session. */
export function withContinuable(rows: readonly DisplayRow[], idle: boolean): DisplayRow[] {
  const out = [...rows];
  if (!idle) {
    return out;
  }
  for (let i = out.length - 1; i >= 0; i--) {
    const row = out[i];
    if (row.kind === 'marker') {
      if (continuable(row)) {
        out[i] = { ...row, continuable: true };
      }
      return out;
    }
    if (row.kind === 'user' || row.kind === 'assistant') {
      return out; // the last turn went on after its marker, or has none
    }
  }
  return out;
}
