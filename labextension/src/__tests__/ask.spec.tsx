/**
 * The composer while a turn runs (Queue, Steer only where the backend can), the queued list and
 * the model picker render what their props say.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import React from 'react';
import { renderToStaticMarkup } from 'react-dom/server';

import { Composer } from '../components/composer/composer';
import { ModelPicker } from '../components/composer/model-picker';
import { QueuedList } from '../components/sidebar/queued-list';

const html = (element: JSX.Element) => renderToStaticMarkup(element);
const noop = () => undefined;
const composer = (streaming: boolean, canSteer: boolean) =>
  html(<Composer streaming={streaming} canEdit={true} canSteer={canSteer} onSend={async () => true}
    onStop={noop} onRetry={noop} onUndo={noop} />);

test('while a turn runs the composer queues, offers Stop, and Steer only when the backend can steer', () => {
  const running = composer(true, false);
  assert.match(running, /data-testid="hermes-stop"/);
  assert.match(running, /data-testid="hermes-send"[^>]*>Queue</);
  assert.doesNotMatch(running, /hermes-steer/);
  assert.match(composer(true, true), /data-testid="hermes-steer"/);
  const idle = composer(false, true);
  assert.match(idle, /data-testid="hermes-send"[^>]*>Send</);
  assert.doesNotMatch(idle, /hermes-stop|hermes-steer/);
});

test('queued messages are listed in order, each with a way off the queue', () => {
  const out = html(<QueuedList onCancel={noop} queued={[
    { run_id: 'r1', message: 'count to 3', queued_at: 1 }, { run_id: 'r2', message: 'count to 4', queued_at: 2 }]} />);
  assert.match(out, /data-run-id="r1"[^]*count to 3[^]*hermes-queued-cancel[^]*data-run-id="r2"[^]*count to 4/);
  assert.equal(html(<QueuedList onCancel={noop} queued={[]} />), '');
});

test('the model picker lists the backend models with the session model chosen, and hides with none', () => {
  const models = { backend: 'demo', default: 'demo', models: [
    { id: 'demo', label: 'Demo' }, { id: 'demo-large', label: 'Large' }] };
  const out = html(<ModelPicker models={models} value="demo-large" onChange={noop} />);
  assert.match(out, /<option value="demo">Demo<\/option><option value="demo-large" selected="">Large<\/option>/);
  const unlisted = html(<ModelPicker models={models} value="gone" onChange={noop} />);
  assert.match(unlisted, /<option value="gone" selected="">gone<\/option>/);
  assert.equal(html(<ModelPicker models={null} value={null} onChange={noop} />), '');
});
