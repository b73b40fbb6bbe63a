/**
 * A turn's changed cells (model/cell-changes.ts, cell-review.ts, file-sync.ts, cell-badge.ts,
 * autonomy.ts, sha256.ts): grouping, per-cell summaries, undo words, rewind order, the badge's
 * "edited since", the file catch-up decisions, and the autonomy levels offered.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';

import { AUTONOMY_LEVELS, autonomyOf, capOf, offeredLevels } from '../model/autonomy';
import { cellBadge, readHermesMeta } from '../model/cell-badge';
import { groupCellChanges, readCellChange, rewindOrder, runsWithChanges, summarizeTurn } from '../model/cell-changes';
import { CONFLICT_WORDS, actionWords, readUndoAnswer, recordedReview, reviewWords, runWords, undoAnswerWords } from '../model/cell-review';
import { fileChangedSince, fileIsNewer, pendingFileCells, planSync } from '../model/file-sync';
import { sha256Bytes, sha256Hex } from '../model/sha256';
import { change } from './cell-change-rows';

test('each turn\'s cell_change rows become one group where its first change was; other rows stay as they are', () => {
  const text = { kind: 'assistant', id: 'r1:a:0', text: 'Adding a cell.' };
  const later = { kind: 'assistant', id: 'r1:a:1', text: 'Fixed it.' };
  const rows = [
    text,
    change('r1', 'insert', 'c1', { after_source: 'x = 1' }),
    later,
    change('r1', 'run', 'c1', { execution_count: 1 }),
    change('r2', 'edit', 'c0', { before_source: 'a', after_source: 'b' })
  ];
  const shown = groupCellChanges(rows);
  assert.deepEqual(shown.map(r => r.id), ['r1:a:0', 'r1:cell_changes', 'r1:a:1', 'r2:cell_changes']);
  assert.equal(shown[0], text);  // same object: memoised views skip it
  const group = shown[1] as { kind: string; cells: { cell_id: string; actions: string[] }[] };
  assert.equal(group.kind, 'cell_changes');
  assert.deepEqual(group.cells.map(c => [c.cell_id, c.actions]), [['c1', ['insert', 'run']]]);
  assert.deepEqual(groupCellChanges([text]), [text]);
});

test('a cell inserted, run, fixed and run again reads as one item: no source before, the fix after, the last run', () => {
  const [cell] = summarizeTurn([
    change('r', 'insert', 'c', { after_source: 'df["Revenue"]' }),
    change('r', 'run', 'c', { after_source: 'df["Revenue"]', execution_count: 1, outputs_summary: "KeyError: 'Revenue'" }),
    change('r', 'edit', 'c', { before_source: 'df["Revenue"]', after_source: 'df["revenue"]' }),
    change('r', 'run', 'c', { after_source: 'df["revenue"]', execution_count: 2, outputs_summary: '1 line of text' })
  ].map(r => readCellChange(r)!));
  assert.equal(cell.before, null);
  assert.equal(cell.after, 'df["revenue"]');
  assert.equal(cell.execution_count, 2);
  assert.equal(actionWords(cell.actions), 'Added, ran, edited, ran');
  assert.equal(runWords(cell), 'Ran [2]: 1 line of text');
});

test('an edited cell keeps the source it had before the turn; a deleted one has none after; a refusal says why', () => {
  const cells = summarizeTurn([
    change('r', 'edit', 'a', { before_source: 'one', after_source: 'two' }),
    change('r', 'edit', 'a', { before_source: 'two', after_source: 'three' }),
    change('r', 'delete', 'b', { before_source: 'gone' }),
    change('r', 'edit', 'z', { applied: false, why: 'The notebook has no cell z.' })
  ].map(r => readCellChange(r)!));
  assert.deepEqual(cells.map(c => [c.before, c.after]), [['one', 'three'], ['gone', null], [null, null]]);
  assert.deepEqual(cells[2].refused, [{ action: 'edit', why: 'The notebook has no cell z.' }]);
  assert.equal(readCellChange({ kind: 'proposal', id: 'r:proposal:p' }), null);
  assert.equal(readCellChange(change('r', 'rename', 'a')), null);
  assert.equal(readCellChange({ ...change('r', 'run', 'a'), id: 'run-9:cell_change:4', run_id: undefined })!.run_id, 'run-9');
});

test('undo answers in words; conflicts say the cell was left as it is', () => {
  assert.equal(undoAnswerWords({ restored: ['a', 'b'], conflicts: [] }), 'Restored 2 cells.');
  assert.equal(undoAnswerWords({ restored: ['a'], conflicts: ['b'] }),
    'Restored 1 cell. 1 cell changed since the agent wrote it: left as it is.');
  assert.equal(undoAnswerWords({ restored: [], conflicts: [] }), 'Nothing left to undo.');
  assert.deepEqual(readUndoAnswer({ restored: ['a', 3] }), { restored: ['a'], conflicts: [] });
  assert.equal(reviewWords('conflict'), CONFLICT_WORDS);
  assert.match(CONFLICT_WORDS, /You or a collaborator changed this cell since; it was left as it is\./);
});

test('the server\'s record says kept or undone after a reload', () => {
  const record = { 'r1:a': 'kept', 'r1:b': { by: { kind: 'person', user: 'alice' }, at: 5 } };
  assert.equal(recordedReview(record, 'r1', 'a'), 'kept');
  assert.equal(recordedReview(record, 'r1', 'b'), 'undone');
  assert.equal(recordedReview(record, 'r2', 'a'), null);
  assert.equal(recordedReview(undefined, 'r1', 'a'), null);
});

test('rewind undoes this turn and every later turn that changed cells, newest first', () => {
  const rows = [change('r1', 'insert', 'a'), { kind: 'assistant', id: 'r2:a:0' }, change('r3', 'edit', 'a'),
    change('r4', 'edit', 'b', { applied: false }), change('r5', 'run', 'a')];
  const runs = runsWithChanges(rows);
  assert.deepEqual(runs, ['r1', 'r3', 'r5']);
  assert.deepEqual(rewindOrder(runs, 'r3'), ['r5', 'r3']);
  assert.deepEqual(rewindOrder(runs, 'r2'), []);
});

test('sha256 matches the server\'s hash of the source, with and without Web Crypto', async () => {
  for (const text of ['', 'abc', 'print("héllo ✓")\n' + 'x'.repeat(200)]) {
    const expected = createHash('sha256').update(text, 'utf8').digest('hex');
    assert.equal(Buffer.from(sha256Bytes(new TextEncoder().encode(text))).toString('hex'), expected);
    assert.equal(await sha256Hex(text), expected);
  }
});

test('a cell\'s badge names what Hermes did, and says "edited since" once the source hash differs', () => {
  const meta = readHermesMeta({ run_id: 'r1', model: 'gpt-4o', approved_by: { kind: 'person', user: 'alice' },
    source_sha256: 'aaa', actions: ['insert', 'run', 'bogus'] })!;
  const same = cellBadge(meta, 'aaa');
  assert.equal(same.edited, false);
  assert.equal(same.text, 'Hermes · added, ran');
  assert.match(same.title, /Hermes added, ran this cell with gpt-4o\. Running it was approved by alice\./);
  const edited = cellBadge(meta, 'bbb');
  assert.equal(edited.edited, true);
  assert.equal(edited.text, 'Hermes · edited since');
  assert.equal(cellBadge(meta, null).edited, false);  // not hashed yet: not claimed
  assert.equal(readHermesMeta('x'), null);
});

test('an open notebook takes only the file changes made after it last read the file, by each cell\'s latest change', () => {
  const rows = [
    change('r', 'insert', 'new', { after_source: 'x', at: 10 }),
    change('r', 'edit', 'old', { after_source: 'y', at: 5 }),
    change('r', 'edit', 'room', { after_source: 'z', at: 20, landed: 'room' }),
    change('r', 'edit', 'shown', { after_source: 'w', at: 30 }),
    change('r', 'insert', 'twice', { after_source: 'a', at: 40 }),
    change('r', 'edit', 'twice', { before_source: 'a', after_source: 'b', at: 41 })
  ].map(r => readCellChange(r)!);
  const doc = [{ id: 'old', source: 'q' }, { id: 'shown', source: 'w' }, { id: 'twice', source: 'b' }];
  const after8 = (c: { at: number | null }) => c.at! > 8;
  assert.deepEqual(pendingFileCells(rows, 'nb.ipynb', doc, after8), ['new']);
  assert.deepEqual(pendingFileCells(rows, 'other.ipynb', doc, after8), []);
  assert.deepEqual(pendingFileCells(rows, 'nb.ipynb', doc, () => true), ['new', 'old']);
  assert.equal(fileIsNewer(10_000, 9_800), false);  // within JupyterLab's margin: the file it read
  assert.equal(fileIsNewer(10_000, 9_000), true);
});

test('a file written twice within JupyterLab\'s time margin is two versions: the hashes decide', () => {
  const read = { hash: 'h1', last_modified: '2026-12-05T10:00:00.000Z' };
  // the agent inserted a cell, then ran it 200 ms later: same margin, another file
  assert.equal(fileChangedSince({ hash: 'h2', last_modified: '2026-12-05T10:00:00.200Z' }, read), true);
  assert.equal(fileChangedSince({ hash: 'h1', last_modified: '2026-12-05T10:00:09.000Z' }, read), false);
  // without hashes, by time beyond the margin
  assert.equal(fileChangedSince({ last_modified: '2026-12-05T10:00:00.200Z' }, { last_modified: read.last_modified }), false);
  assert.equal(fileChangedSince({ last_modified: '2026-12-05T10:00:02.000Z' }, { last_modified: read.last_modified }), true);
  assert.equal(fileChangedSince({ hash: 'h2' }, null), true);
});

test('catching up deletes, then updates and inserts in the file\'s order: only the named cells', () => {
  const doc = [{ id: 'a', source: 'mine' }, { id: 'b', source: 'b' }, { id: 'gone', source: 'g' }];
  const disk = [{ id: 'a', cell_type: 'code', source: ['agent'] }, { id: 'n', cell_type: 'code', source: 'new' },
    { id: 'b', cell_type: 'code', source: 'b on disk' }];
  assert.deepEqual(planSync(doc, disk, ['n', 'a', 'gone', 'a']), [
    { op: 'delete', id: 'gone' }, { op: 'update', id: 'a', cell: disk[0] }, { op: 'insert', index: 1, cell: disk[1] }
  ]);
});

test('autonomy: the session\'s level (Propose by default), and only the levels the server allows', () => {
  assert.equal(autonomyOf({}), 'propose');
  assert.equal(autonomyOf({ autonomy: 'agent' }), 'agent');
  assert.equal(autonomyOf({ autonomy: 'yolo' }), 'propose');
  assert.deepEqual(offeredLevels(capOf({ max_autonomy: 'agent' }), 'propose'), ['ask', 'propose', 'agent']);
  assert.deepEqual(offeredLevels(capOf({ max_autonomy: 'propose' }), 'agent'), ['ask', 'propose', 'agent']);
  assert.deepEqual(offeredLevels(null, 'propose'), [...AUTONOMY_LEVELS]);
});
