/** `cell_change` rows as the server folds them, for the specs (each with its own seq and time). */
let seq = 0;
export function change(run: string, action: string, cell: string, extra: { [key: string]: unknown } = {}) {
  seq += 1;
  return {
    kind: 'cell_change', id: `${run}:cell_change:${seq}`, action, cell_id: cell, applied: true, why: null,
    path: 'nb.ipynb', index: 0, cell_type: 'code', before_source: null, after_source: null, source_sha256: null,
    execution_count: null, outputs_summary: null, landed: 'file', tool_call_id: `t${seq}`, at: 1000 + seq, ...extra
  };
}
