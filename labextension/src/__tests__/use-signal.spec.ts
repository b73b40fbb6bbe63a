/**
 * useSignal's store: an emission between a component's render and its subscription is not lost.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Signal } from '@lumino/signaling';

import { emissions } from '../components/use-signal';

test('an emission after the first read and before any subscriber still changes the snapshot', () => {
  const owner = {};
  const changed = new Signal<object, void>(owner);
  const rendered = emissions(changed); // what the render read
  changed.emit(); // the journal page lands before React subscribed
  // React reads the snapshot again after subscribing: a different value makes it render again.
  assert.notEqual(emissions(changed), rendered);
  changed.emit();
  assert.equal(emissions(changed), rendered + 2);
});

test('each signal counts its own emissions', () => {
  const a = new Signal<object, void>({});
  const b = new Signal<object, void>({});
  emissions(a);
  emissions(b);
  a.emit();
  assert.deepEqual([emissions(a), emissions(b)], [1, 0]);
});
