/**
 * Which answer a Continue button belongs to: the session's last one, when it
 * ended interrupted or stopped and nothing runs (the server continues only that
 * turn, CONTRACT §10). Pure.
 */
import { DisplayRow } from '../api/rows';

/** `rows` with the closing marker flagged `continuable` when `idle` and that marker ends the session. */
export function withContinuable(rows: readonly DisplayRow[], idle: boolean): DisplayRow[] {
  const out = [...rows];
  if (!idle) {
    return out;
  }
  for (let i = out.length - 1; i >= 0; i--) {
    const row = out[i];
    if (row.kind === 'marker') {
      if (row.variant === 'interrupted' || row.variant === 'cancelled') {
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
