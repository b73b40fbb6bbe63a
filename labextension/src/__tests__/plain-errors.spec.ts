/**
 * The server words every refusal for a person; the sidebar shows that sentence, with the server's
 * technical detail and the HTTP code kept for the details fold. A status line without a sentence
 * (a proxy's page, an old server) still gets the sidebar's own words.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { ServerConnection } from '@jupyterlab/services';

import { HermesApiError, HermesClient } from '../api/client';
import { plainError } from '../api/plain-errors';

function answering(status: number, body: string): HermesClient {
  const fetch = async (): Promise<Response> =>
    new Response(body, { status, headers: { 'Content-Type': 'application/json' } });
  const settings = ServerConnection.makeSettings({
    baseUrl: 'http://lab.test/',
    wsUrl: 'ws://lab.test/',
    token: '',
    fetch: fetch as typeof globalThis.fetch
  });
  return new HermesClient(settings);
}

const LINKED = "The hermes state folder 'runs' is a link; Hermes does not follow links there. Replace it with a real folder and restart the server.";

test("a refused state folder (503) reads as the server's sentence, its detail in the fold", async () => {
  const client = answering(503, JSON.stringify({ message: LINKED, detail: '/state/runs -> /elsewhere' }));
  const failure = await client.listSessions().then(
    () => assert.fail('the listing should fail'),
    (error: unknown) => error
  );
  const plain = plainError(failure);
  assert.equal(plain.text, LINKED);
  assert.match(plain.details, /\/state\/runs -> \/elsewhere/);
  assert.match(plain.details, /HTTP 503/);
  assert.notEqual(plain.offline, true);
});

test('a person-only refusal (403) is not read as "signed out"', () => {
  const plain = plainError(new HermesApiError('Only a person can answer this approval: do it in JupyterLab.', 403, true));
  assert.equal(plain.text, 'Only a person can answer this approval: do it in JupyterLab.');
});

test('a status line without a sentence keeps the sidebar\'s own words, and a 500 never shows server text', () => {
  assert.match(plainError(new HermesApiError('409 Conflict', 409)).text, /still answering/);
  assert.match(plainError(new HermesApiError('Something broke', 500, true)).text, /ran into a problem/);
});
