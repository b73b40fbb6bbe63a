/**
 * Continue is offered once: on the marker that ends the session, while nothing runs.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { DisplayRow, IMarkerRow } from '../api/rows';
import { withContinuable } from '../model/continuable';

const marker = (id: string, variant: IMarkerRow['variant']): IMarkerRow =>
  ({ kind: 'marker', id, variant, text: '**Task cancelled.**', cause: null });
const user: DisplayRow = { kind: 'user', id: 'u', text: 'count to 9' };
const answer: DisplayRow = { kind: 'assistant', id: 'a', text: '1 2 3' };
const flagged = (rows: DisplayRow[]) => rows.filter(r => r.kind === 'marker' && (r as IMarkerRow).continuable).map(r => r.id);

test('only the marker that ends the session is continuable, and only while idle', () => {
  const rows = [user, answer, marker('m1', 'cancelled'), answer, marker('m2', 'interrupted')];
  assert.deepEqual(flagged(withContinuable(rows, true)), ['m2']);
  assert.deepEqual(flagged(withContinuable(rows, false)), []);
  assert.deepEqual(flagged(withContinuable([user, answer, marker('m3', 'error')], true)), []);
  assert.deepEqual(flagged(withContinuable([user, answer, marker('m1', 'cancelled'), answer], true)), []);
  assert.equal(rows[4].kind === 'marker' && rows[4].continuable, undefined); // the input is left as it was
});

test('a cut stream and a length stop are continuable; other errors are retried', () => {
  const error = (id: string, cause: string): IMarkerRow => ({ ...marker(id, 'error'), cause });
  assert.deepEqual(flagged(withContinuable([user, answer, error('m1', 'length_limit')], true)), ['m1']);
  assert.deepEqual(flagged(withContinuable([user, answer, error('m2', 'stream_cut')], true)), ['m2']);
  assert.deepEqual(flagged(withContinuable([user, answer, error('m3', 'content_filter')], true)), []);
});
