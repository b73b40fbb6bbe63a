/**
 * When the server is back, the sidebar sees it at once: the client says so on the first request
 * answered after server failures, and the session list, backed off while it failed, reads again
 * then instead of after its back-off.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { ServerConnection } from '@jupyterlab/services';

import { HermesClient } from '../api/client';
import { plainError } from '../api/plain-errors';
import { SessionsModel } from '../model/sessions';

/** A server that is down (fetch rejects) or answers `status`; records the paths asked. */
function fakeServer() {
  const state = { down: false, status: 200, asked: [] as string[] };
  const fetch = async (request: Request): Promise<Response> => {
    state.asked.push(new URL(request.url).pathname);
    if (state.down) {
      throw new TypeError('Failed to fetch');
    }
    const body = request.url.includes('/sessions?') ? { sessions: [{ session_id: 's1' }], next: null } : {};
    return new Response(JSON.stringify(body), { status: state.status, headers: { 'Content-Type': 'application/json' } });
  };
  const settings = ServerConnection.makeSettings({
    baseUrl: 'http://lab.test/',
    wsUrl: 'ws://lab.test/',
    token: '',
    fetch: fetch as typeof globalThis.fetch
  });
  return { state, client: new HermesClient(settings) };
}

function counter(client: HermesClient): { count: number } {
  const seen = { count: 0 };
  client.reconnected.connect(() => void (seen.count += 1));
  return seen;
}

test('the client says the server is back on the first answer after it could not be reached', async () => {
  const { state, client } = fakeServer();
  const back = counter(client);
  await client.getRun('r1');
  assert.equal(back.count, 0, 'nothing failed before');

  state.down = true;
  const failure = await client.getRun('r1').catch(error => error);
  assert.equal(plainError(failure).offline, true);
  await assert.rejects(client.getRun('r1'));
  assert.equal(back.count, 0);

  state.down = false;
  state.status = 404; // an answer, even a refusal, means the server is there
  await assert.rejects(client.getRun('gone'));
  assert.equal(back.count, 1);
  state.status = 200;
  await client.getRun('r1');
  assert.equal(back.count, 1, 'said once per outage');
});

test('a server answering 5xx is failing too, and its first good answer says it is back', async () => {
  const { state, client } = fakeServer();
  const back = counter(client);
  state.status = 503;
  const failure = await client.getRun('r1').catch(error => error);
  assert.notEqual(plainError(failure).offline, true, 'a 5xx is an answer, not "cannot be reached"');
  state.status = 200;
  await client.getRun('r1');
  assert.equal(back.count, 1);
});

test('the session list reads again as soon as another request finds the server back', { timeout: 20000 }, async () => {
  const { state, client } = fakeServer();
  state.down = true;
  const sessions = new SessionsModel(client);
  try {
    // The poll's first read fails: the list says so and the poll backs off (10 s or more).
    await new Promise<void>(resolve => sessions.changed.connect(() => sessions.error && resolve()));
    assert.equal(sessions.error?.offline, true);
    const listed = state.asked.filter(path => path.endsWith('/sessions')).length;

    state.down = false;
    await client.getRun('r1'); // the chat, say, reaches the server again
    assert.equal(sessions.pollState.phase, 'refreshed', 'a read is asked for now, not after the back-off');
    await new Promise<void>(resolve =>
      sessions.changed.connect(() => !sessions.error && sessions.sessions.length === 1 && resolve())
    );
    assert.equal(state.asked.filter(path => path.endsWith('/sessions')).length, listed + 1);
  } finally {
    sessions.dispose();
  }
});

test('the network back online, or the page shown again, reads the failed list at once', { timeout: 20000 }, async () => {
  // Just enough of a page for the model's listeners (this file runs in its own process).
  const { state, client } = fakeServer();
  const page = globalThis as unknown as { window?: EventTarget; document?: EventTarget & { visibilityState: string } };
  page.window = new EventTarget();
  page.document = Object.assign(new EventTarget(), { visibilityState: 'hidden', cookie: '' });
  state.down = true;
  const sessions = new SessionsModel(client);
  try {
    await new Promise<void>(resolve => sessions.changed.connect(() => sessions.error && resolve()));
    state.down = false;
    page.window.dispatchEvent(new Event('online'));
    assert.equal(sessions.pollState.phase, 'refreshed');
    await new Promise<void>(resolve => sessions.changed.connect(() => !sessions.error && resolve()));

    state.down = true;
    await sessions.refresh().catch(() => undefined);
    assert.ok(sessions.error);
    page.document.visibilityState = 'visible';
    page.document.dispatchEvent(new Event('visibilitychange'));
    assert.equal(sessions.pollState.phase, 'refreshed');
  } finally {
    sessions.dispose();
    delete page.window;
    delete page.document;
  }
});
