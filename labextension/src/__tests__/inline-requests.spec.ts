/**
 * Inline completion's requests while typing (docs/editor.md): a pause before asking, only the newest
 * request counts, a newer one aborts the one before it (waiting or asking). The pause is a
 * hand-driven fake: the test says when it ends, no clock involved.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { LatestRequest, Sleep, aroundCursor } from '../model/inline-requests';

/** A Sleep the test ends by hand (`wake`), or that ends early on abort, as the real one does. */
function manualSleep(): { sleep: Sleep; wake: () => void; waiting: () => number; delays: number[] } {
  const wakers: Array<() => void> = [];
  const delays: number[] = [];
  const sleep: Sleep = (ms, signal) =>
    new Promise<void>(resolve => {
      delays.push(ms);
      wakers.push(resolve);
      signal.addEventListener('abort', () => resolve());
    });
  return { sleep, wake: () => wakers.shift()?.(), waiting: () => wakers.length, delays };
}

test('two requests in one pause: only the second asks, the first answers null without asking', async () => {
  const fake = manualSleep();
  const latest = new LatestRequest(300, fake.sleep);
  const asked: string[] = [];
  const first = latest.run(async () => (asked.push('first'), 'a'));
  const second = latest.run(async () => (asked.push('second'), 'b'));
  assert.equal(await first, null); // aborted while waiting: it ended its pause early
  fake.wake();
  fake.wake();
  assert.equal(await second, 'b');
  assert.deepEqual(asked, ['second']);
  assert.deepEqual(fake.delays, [300, 300]);
});

test('a newer request aborts one already asking, and its answer is dropped', async () => {
  const fake = manualSleep();
  const latest = new LatestRequest(300, fake.sleep);
  let seen: AbortSignal | null = null;
  let answer: (text: string) => void = () => undefined;
  const first = latest.run(
    signal =>
      new Promise<string>(resolve => {
        seen = signal;
        answer = resolve;
      })
  );
  fake.wake();
  await new Promise(resolve => setImmediate(resolve)); // the first now asks
  assert.ok(seen && !(seen as AbortSignal).aborted);
  const second = latest.run(async () => 'newer');
  assert.equal((seen as unknown as AbortSignal).aborted, true); // the server request is cancelled
  answer('stale'); // it answers anyway: nobody shows it
  assert.equal(await first, null);
  fake.wake();
  assert.equal(await second, 'newer');
});

test('cancel aborts the waiting request; a failure of a request that counts is thrown', async () => {
  const fake = manualSleep();
  const latest = new LatestRequest(0, fake.sleep);
  const waiting = latest.run(async () => 'never');
  latest.cancel();
  assert.equal(await waiting, null);
  const failing = latest.run(async () => {
    throw new Error('409: Inline completion is off');
  });
  fake.wake();
  fake.wake();
  await assert.rejects(failing, /Inline completion is off/);
});

test('a failure after a newer request superseded it is not thrown', async () => {
  const fake = manualSleep();
  const latest = new LatestRequest(0, fake.sleep);
  const first = latest.run(
    signal => new Promise<string>((_, reject) => signal.addEventListener('abort', () => reject(new Error('AbortError'))))
  );
  fake.wake();
  await new Promise(resolve => setImmediate(resolve));
  const second = latest.run(async () => 'ok');
  assert.equal(await first, null);
  fake.wake();
  assert.equal(await second, 'ok');
});

test('only code before the cursor on its line is worth completing', () => {
  assert.deepEqual(aroundCursor('import os\ndef add', 17), { prefix: 'import os\ndef add', suffix: '' });
  assert.deepEqual(aroundCursor('x = (\n)', 5), { prefix: 'x = (', suffix: '\n)' });
  assert.equal(aroundCursor('import os\n    ', 14), null);
  assert.equal(aroundCursor('', 0), null);
});
