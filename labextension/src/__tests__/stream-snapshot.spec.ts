/**
 * A live follower joins a run in one message: its stream asks for a snapshot, the live fold starts
 * from it, rows after its seq extend it, and no journal page is read. A reconnect resumes from the
 * cursor.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { ISnapshotMessage } from '../api/contract';
import { RunStream } from '../api/stream';
import { RunFollower } from '../model/run-follower';
import { FakeSocket, fakeClient, tick } from './fake-server';
import { journal } from './rows';

const RUNNING = { run_id: 'r', session_id: 's', status: 'running', last_seq: 5 };
const sockets = FakeSocket.opened;

const SNAPSHOT: ISnapshotMessage = {
  type: 'snapshot',
  run_id: 'r',
  session_id: 's',
  last_seq: 5,
  rows: [{ kind: 'tool', id: 'r:tool:t1', tid: 't1', name: 'search', args: null, preview: null, status: 'running', duration_s: null }],
  open: { n: 0, text: '1 2 3 ', reasoning: '' },
  waits: {}
};

test('a live follower starts from the snapshot and folds the rows after it', async () => {
  sockets.length = 0;
  const { asked, client } = fakeClient(() => RUNNING);
  const follower = new RunFollower({ client, runId: 'r' });
  await follower.start();
  await tick();
  const socket = sockets[0];
  assert.match(socket.url, /\/runs\/r\/stream\?after_seq=0&snapshot=1/);
  socket.send(SNAPSHOT);
  assert.deepEqual(follower.transcript.rows.map(r => r.kind), ['tool', 'assistant']);
  assert.equal(follower.transcript.lastSeq, 5);
  const later = journal('r', [
    ['token', {}], ['token', {}], ['token', {}], ['token', {}], ['token', {}],
    ['token', { text: '4' }],
    ['tool_complete', { tid: 't1', name: 'search' }],
    ['done', {}]
  ]).slice(5);
  later.forEach(row => socket.send(row));
  const rows = follower.transcript.rows;
  assert.deepEqual(rows[0], { ...SNAPSHOT.rows[0], status: 'done' }, 'a card of the snapshot is completed by a later row');
  assert.deepEqual(rows[1], { kind: 'assistant', id: 'r:a:0', text: '1 2 3 4' }, 'the open text goes on where it was');
  assert.ok(!asked.some(path => path.endsWith('/events')), 'no journal page was read');
  follower.dispose();
});

test('a reconnect resumes from the snapshot seq (the server sends rows when only a few are missing)', async () => {
  sockets.length = 0;
  const { client } = fakeClient(() => RUNNING);
  const stream = new RunStream({ client, runId: 'r', snapshot: true, idleTimeoutMs: 60000 });
  const got: number[] = [];
  stream.snapshotReceived.connect((_, s) => got.push(s.last_seq));
  stream.start();
  await tick();
  sockets[0].send(SNAPSHOT);
  sockets[0].drop();
  await new Promise(resolve => setTimeout(resolve, 700)); // the first back-off, then the probe
  assert.equal(sockets.length, 2);
  assert.match(sockets[1].url, /after_seq=5&snapshot=1$/);
  assert.deepEqual(got, [5]);
  stream.dispose();
});
