/**
 * The sidebar shows a session's stored turns as the server folded them (plans, usage and notes
 * included), and an ended run becomes its turn from the stream's settled message, without reading
 * the session again.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { ISession, ISettledMessage, IStoredTurn } from '../api/contract';
import { ChatModel } from '../model/chat';
import { FollowerPool } from '../model/follower-pool';
import { sortSessions } from '../model/sessions';
import { recoveredAfterRestart, turnRows, withTurn } from '../model/turn-rows';
import { FakeSocket, fakeClient, tick } from './fake-server';
import { journal } from './rows';

const PAST: IStoredTurn = {
  run_id: 'r1',
  status: 'completed',
  user: { id: 'r1:user', text: 'plan it' },
  rows: [
    { kind: 'plan', id: 'r1:plan', items: [{ text: 'Load', status: 'completed' }] },
    { kind: 'assistant', id: 'r1:a:0', text: 'Done.' },
    { kind: 'usage', id: 'r1:usage', input_tokens: 12, output_tokens: 3, cached_tokens: null, cost_usd: null,
      duration_s: 1.5, model: 'demo', our_count: true },
    { kind: 'note', id: 'r1:note:7', variant: 'status', level: 'info', text: 'Compacted.' }
  ]
};

test("a session's stored turns are its rows: the user's, then the fold's, plan, usage and notes kept", () => {
  const continued: IStoredTurn = { run_id: 'r2', status: 'completed', user: null, rows: [{ kind: 'assistant', id: 'r2:a:0', text: 'more' }] };
  assert.deepEqual(turnRows([PAST, continued]).map(r => r.id), [
    'r1:user', 'r1:plan', 'r1:a:0', 'r1:usage', 'r1:note:7', 'r2:a:0'
  ]);
  assert.deepEqual(turnRows([PAST])[0], { kind: 'user', id: 'r1:user', text: 'plan it' });
});

test('a turn settled twice is kept once, where it was', () => {
  const again = { ...PAST, status: 'errored' as const };
  const other: IStoredTurn = { run_id: 'r0', status: 'completed', rows: [] };
  assert.deepEqual(withTurn([other, PAST], again).map(t => [t.run_id, t.status]), [['r0', 'completed'], ['r1', 'errored']]);
});

test('a turn recovered after a server restart is seen for the banner', () => {
  const recovered: IStoredTurn = { ...PAST, user: { id: 'r1:user', text: 'x', recovered: true } };
  assert.equal(recoveredAfterRestart(turnRows([recovered])), true);
  const marker: IStoredTurn = { run_id: 'r3', status: 'interrupted', rows: [
    { kind: 'marker', id: 'r3:marker', variant: 'interrupted', text: 'Stopped.', cause: 'server_restart' }
  ] };
  assert.equal(recoveredAfterRestart(turnRows([marker])), true);
  assert.equal(recoveredAfterRestart(turnRows([PAST])), false);
});

test('sessions sort newest first', () => {
  const sorted = sortSessions([
    { session_id: 'a', updated_at: 1 },
    { session_id: 'b', updated_at: 3 },
    { session_id: 'c', created_at: 2 }
  ]);
  assert.deepEqual(sorted.map(s => s.session_id), ['b', 'c', 'a']);
});

test('an ended run becomes its stored turn from the settled message, the session not read again', async () => {
  FakeSocket.opened.length = 0;
  const session = {
    session_id: 's', messages: [], turns: [PAST], active_stream_id: 'r2', pending_user_message: 'count to 2', backend: 'demo'
  } as unknown as ISession;
  const { asked, client } = fakeClient(path =>
    path.endsWith('/sessions/s') ? session : path.includes('/runs/') ? { run_id: 'r2', session_id: 's', status: 'running', last_seq: 0 } : {}
  );
  const chat = new ChatModel({ client, createWithFirstTurn: async () => ({ sessionId: 's', runId: 'r2' }) });
  await chat.open('s');
  await tick();
  const socket = FakeSocket.opened[0];
  assert.match(socket.url, /runs\/r2\/stream\?after_seq=0&snapshot=1/);
  socket.send({ type: 'snapshot', run_id: 'r2', session_id: 's', last_seq: 1, rows: [], open: { n: 0, text: '1', reasoning: '' }, waits: {} });
  assert.deepEqual(chat.rows.map(r => r.id), ['r1:user', 'r1:plan', 'r1:a:0', 'r1:usage', 'r1:note:7', 'r2:user', 'r2:a:0']);
  journal('r2', [['token', {}], ['token', { text: ' 2' }], ['done', {}]], 's').slice(1).forEach(row => socket.send(row));
  const rows = [{ kind: 'assistant' as const, id: 'r2:a:0', text: '1 2' }];
  const settled: ISettledMessage = {
    settled: true, run_id: 'r2', session_id: 's', status: 'completed', bundle: {},
    transcript: { run_id: 'r2', session_id: 's', status: 'completed', last_seq: 3, rows },
    user: { id: 'r2:user', text: 'count to 2', attachments: [] }
  };
  const readsBefore = asked.filter(a => a.endsWith('/sessions/s')).length;
  socket.send(settled);
  await tick(20);
  assert.equal(chat.status, 'idle');
  assert.equal(chat.runId, null);
  assert.deepEqual(chat.rows.map(r => r.id), ['r1:user', 'r1:plan', 'r1:a:0', 'r1:usage', 'r1:note:7', 'r2:user', 'r2:a:0']);
  assert.deepEqual(chat.session?.turns?.map(t => t.run_id), ['r1', 'r2']);
  assert.deepEqual(chat.rows[5], { kind: 'user', id: 'r2:user', text: 'count to 2' }, "the stored turn's user row");
  assert.equal(asked.filter(a => a.endsWith('/sessions/s')).length, readsBefore, 'the session was not read again');
  chat.dispose();
});

test('the sidebar and a cell showing the same run share one follower and one stream', async () => {
  FakeSocket.opened.length = 0;
  const session = { session_id: 's', messages: [], turns: [], active_stream_id: 'r2', backend: 'demo' } as unknown as ISession;
  const { client } = fakeClient(path =>
    path.endsWith('/sessions/s') ? session : path.includes('/runs/') ? { run_id: 'r2', session_id: 's', status: 'running', last_seq: 0 } : {}
  );
  const followers = new FollowerPool(client, 20);
  const cell = followers.acquire('r2', true);
  const chat = new ChatModel({ client, followers, createWithFirstTurn: async () => ({ sessionId: 's', runId: 'r2' }) });
  await chat.open('s');
  await tick();
  assert.equal(chat.runId, 'r2');
  assert.equal(FakeSocket.opened.length, 1, 'one stream for the run');
  assert.equal(chat.hasTurns, false);
  FakeSocket.opened[0].send({
    settled: true, run_id: 'r2', session_id: 's', status: 'completed', bundle: {}, user: null,
    transcript: { run_id: 'r2', session_id: 's', status: 'completed', last_seq: 3, rows: [{ kind: 'assistant', id: 'r2:a:0', text: 'hi' }] }
  });
  await tick(20);
  assert.deepEqual(chat.rows.map(r => r.id), ['r2:a:0']);
  assert.equal(chat.runId, null);
  assert.equal(cell.isDisposed, false, 'the cell still shows it');
  assert.equal(chat.hasTurns, true, 'Retry and Undo are offered for the turn just settled');
  followers.release(cell);
  chat.dispose();
});

test('replies of a stopped turn are partial, and of a turn recovered after a server restart recovered', () => {
  const stopped: IStoredTurn = {
    run_id: 'r3', status: 'cancelled', user: { id: 'r3:user', text: 'count' },
    rows: [{ kind: 'assistant', id: 'r3:a:0', text: '1 2 3' }]
  };
  const restarted: IStoredTurn = {
    run_id: 'r4', status: 'interrupted', user: { id: 'r4:user', text: 'count', recovered: true },
    rows: [{ kind: 'assistant', id: 'r4:a:0', text: '1 2' }]
  };
  const [, stoppedReply] = turnRows([stopped]);
  const [, restartedReply] = turnRows([restarted]);
  assert.deepEqual(stoppedReply, { kind: 'assistant', id: 'r3:a:0', text: '1 2 3', partial: true, recovered: false });
  assert.deepEqual(restartedReply, { kind: 'assistant', id: 'r4:a:0', text: '1 2', partial: false, recovered: true });
  assert.deepEqual(turnRows([PAST])[2], { kind: 'assistant', id: 'r1:a:0', text: 'Done.' });
});
