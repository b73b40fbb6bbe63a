import assert from 'node:assert/strict';
import { test } from 'node:test';

import type { HermesClient } from '../api/client';
import { FollowerPool } from '../model/follower-pool';
import { notebookSession } from '../model/notebook-session';

/** A client whose server never answers: the followers stay loading, no stream is opened. */
const quietClient = { getRun: () => new Promise(() => undefined) } as unknown as HermesClient;

test('views of one run share its follower, so a view created again keeps what it showed', async () => {
  const pool = new FollowerPool(quietClient, 20);
  const first = pool.acquire('run-1', true);
  pool.release(first); // the collaborator's output was replaced: its renderer is disposed ...
  const again = pool.acquire('run-1', true); // ... and the new one takes the same follower back
  assert.equal(again, first);
  assert.equal(first.state, 'loading');
  assert.notEqual(pool.acquire('run-2', true), first);
  pool.release(again);
  await new Promise(resolve => setTimeout(resolve, 60));
  assert.equal(first.isDisposed, true, 'an unused follower is disposed after a while');
  const fresh = pool.acquire('run-1', true);
  assert.notEqual(fresh, first);
});

test('the sidebar picks the notebook session that streams, else the newest of that notebook', () => {
  const sessions = [
    { session_id: 'other', notebook_path: 'b.ipynb', active_stream_id: 'r0' },
    { session_id: 'newest', notebook_path: 'team.ipynb' },
    { session_id: 'running', notebook_path: 'team.ipynb', active_stream_id: 'r1' }
  ];
  assert.equal(notebookSession(sessions, 'team.ipynb'), 'running');
  assert.equal(notebookSession(sessions.slice(0, 2), 'team.ipynb'), 'newest');
  assert.equal(notebookSession(sessions, 'none.ipynb'), null);
  assert.equal(notebookSession(sessions, null), null);
});
