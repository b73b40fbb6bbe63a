/**
 * A fake Jupyter server for the specs that stream: its WebSockets record the URL they asked and take
 * messages from the test, its fetch answers JSON by path and records what was asked.
 */
import { ServerConnection } from '@jupyterlab/services';

import { HermesClient } from '../api/client';

export class FakeSocket {
  static opened: FakeSocket[] = [];

  constructor(readonly url: string) {
    FakeSocket.opened.push(this);
    setTimeout(() => this.onopen?.({}), 0);
  }
  onopen: ((event: unknown) => void) | null = null;
  onmessage: ((event: { data: string }) => void) | null = null;
  onclose: ((event: { code: number }) => void) | null = null;
  onerror: ((event: unknown) => void) | null = null;
  /** The server sends a message. */
  send(message: unknown): void {
    this.onmessage?.({ data: JSON.stringify(message) });
  }
  /** The connection drops (not a clean close). */
  drop(): void {
    this.onclose?.({ code: 1006 });
  }
  close(): void {
    // the client closed it
  }
}

/** RunStream's timers are the page's (`window.setTimeout`). */
(globalThis as unknown as { window?: typeof globalThis }).window ??= globalThis;

/** A client whose requests are answered by `answer(path)` (JSON, 200) and recorded in `asked`. */
export function fakeClient(answer: (path: string) => unknown) {
  const asked: string[] = [];
  const fetch = async (request: Request): Promise<Response> => {
    const path = new URL(request.url).pathname;
    asked.push(`${request.method} ${path}`);
    return new Response(JSON.stringify(answer(path)), { status: 200, headers: { 'Content-Type': 'application/json' } });
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

export const tick = (ms = 5) => new Promise(resolve => setTimeout(resolve, ms));
