/**
 * Joining a run from a snapshot (docs/api.md, "Joining a run in one message"): for every golden journal and every cut,
 * the live fold restored from the server's snapshot at that cut (tests/fixtures/snapshots) and fed the
 * rest of the journal shows exactly the rows of folding the whole journal, live and settled.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { test } from 'node:test';

import { ISnapshotMessage } from '../api/contract';
import { LiveTranscript } from '../model/transcript';
import { journal, journalRows, settledOf } from './rows';

const FIXTURES = resolve(__dirname, '../../../tests/fixtures');

const scenarios = (existsSync(join(FIXTURES, 'snapshots')) ? readdirSync(join(FIXTURES, 'snapshots')) : [])
  .filter(name => name.endsWith('.json'))
  .map(name => name.slice(0, -'.json'.length))
  .sort();

test('every golden journal has its snapshots', () => {
  assert.ok(scenarios.length >= 2, 'no snapshot fixtures');
});

for (const name of scenarios) {
  test(`snapshots of ${name}: restored and folded on, the rows of the whole journal`, () => {
    const expected = JSON.parse(readFileSync(join(FIXTURES, 'journals', `${name}.expected.json`), 'utf-8'));
    const rows = journalRows(readFileSync(join(FIXTURES, 'journals', `${name}.jsonl`), 'utf-8'));
    const cuts: ISnapshotMessage[] = JSON.parse(readFileSync(join(FIXTURES, 'snapshots', `${name}.json`), 'utf-8')).cuts;
    assert.ok(cuts.length >= 1);
    for (const snapshot of cuts) {
      const fold = new LiveTranscript(snapshot.run_id);
      fold.restore(snapshot);
      const upTo = new LiveTranscript(snapshot.run_id);
      rows.filter(row => row.seq <= snapshot.last_seq).forEach(row => upTo.apply(row));
      assert.deepEqual(fold.rows, upTo.rows, `${name} at ${snapshot.last_seq}: the snapshot shows what was folded`);
      rows.forEach(row => fold.apply(row)); // rows at or before the cut are repeats and change nothing
      assert.deepEqual(fold.rows, expected.live, `${name} restored at ${snapshot.last_seq}`);
      // A view that had part of the run (a reconnect after a long drop) restores over what it had.
      const partly = new LiveTranscript(snapshot.run_id);
      rows.filter(row => row.seq <= snapshot.last_seq / 2).forEach(row => partly.apply(row));
      partly.restore(snapshot);
      rows.forEach(row => partly.apply(row));
      assert.deepEqual(partly.rows, expected.live, `${name} restored at ${snapshot.last_seq} over half of it`);
      fold.settle(settledOf(expected));
      assert.deepEqual(fold.rows, expected.transcript.rows);
    }
  });
}

test('a snapshot older than what the fold has is ignored', () => {
  const fold = new LiveTranscript('r');
  journal('r', [['token', { text: 'a b' }], ['token', { text: ' c' }]]).forEach(row => fold.apply(row));
  fold.restore({ type: 'snapshot', run_id: 'r', session_id: 's', last_seq: 1, rows: [], open: { n: 0, text: 'a b', reasoning: '' }, waits: {} });
  assert.equal(fold.lastSeq, 2);
  assert.deepEqual(fold.rows, [{ kind: 'assistant', id: 'r:a:0', text: 'a b c' }]);
});
