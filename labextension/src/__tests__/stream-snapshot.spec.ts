/**
 * A live follower joins a run in one message: its stream asks for a snapshot, the live fold starts
 * from it, rows after its seq extend it, and no journal page is read. A reconnect resumes with rows
 * from the cursor.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { ServerConnection } from '@jupyterlab/services';

import { HermesClient } from '../api/client';
import { ISnapshotMessage } from '../api/contract';
import { RunStream } from '../api/stream';
import { RunFollower } from '../model/run-follower';
import { journal } from './rows';

/** The sockets opened, each with the URL it asked and a way to send it messages. */
const sockets: FakeSocket[] = [];

class FakeSocket {
  constructor(readonly url: string) {
    sockets.push(this);
    setTimeout(() => this.onopen?.({}), 0);
  }
  onopen: ((event: unknown) => void) | null = null;
  onmessage: ((event: { data: string }) => void) | null = null;
  onclose: ((event: { code: number }) => void) | null = null;
  onerror: ((event: unknown) => void) | null = null;
  send(message: unknown): void {
    this.onmessage?.({ data: JSON.stringify(message) });
  }
  drop(): void {
    this.onclose?.({ code: 1006 });
  }
  close(): void {
    // the client closed it
  }
}

function fakeClient() {
  const asked: string[] = [];
  const fetch = async (request: Request): Promise<Response> => {
    asked.push(new URL(request.url).pathname);
    const body = { run_id: 'r', session_id: 's', status: 'running', last_seq: 5 };
    return new Response(JSON.stringify(body), { status: 200, headers: { 'Content-Type': 'application/json' } });
  };
  const settings = ServerConnection.makeSettings({
    baseUrl: 'http://lab.test/',
    wsUrl: 'ws://lab.test/',
    token: '',
    fetch: fetch as typeof globalThis.fetch,
    WebSocket: FakeSocket as unknown as typeof WebSocket
  });
  return { asked, client: new HermesClient(settings) };
}

const page = globalThis as unknown as { window?: typeof globalThis };
page.window = globalThis;

const tick = () => new Promise(resolve => setTimeout(resolve, 5));

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
  const { asked, client } = fakeClient();
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

test('a reconnect resumes from the snapshot seq with rows, not another snapshot', async () => {
  sockets.length = 0;
  const { client } = fakeClient();
  const stream = new RunStream({ client, runId: 'r', snapshot: true, idleTimeoutMs: 60000 });
  const got: number[] = [];
  stream.snapshotReceived.connect((_, s) => got.push(s.last_seq));
  stream.start();
  await tick();
  sockets[0].send(SNAPSHOT);
  sockets[0].drop();
  await new Promise(resolve => setTimeout(resolve, 700)); // the first back-off, then the probe
  assert.equal(sockets.length, 2);
  assert.match(sockets[1].url, /after_seq=5$/);
  assert.deepEqual(got, [5]);
  stream.dispose();
});
