import assert from 'node:assert/strict';
import { test } from 'node:test';

import { applyEvent, emptyTranscript, foldEvents, hasOutput } from '../model/transcript';
import { journal } from './rows';

test('text is split at tool boundaries and tool cards pair by tid', () => {
  const rows = journal('r1', [
    ['reasoning', { text: 'I should look.' }],
    ['token', { text: 'Let me ' }],
    ['token', { text: 'look.' }],
    ['tool', { tid: 'a', name: 'ls', args: { path: '.' } }],
    ['tool', { tid: 'b', name: 'ls', args: { path: '..' } }],
    ['tool_complete', { tid: 'b', name: 'ls', preview: 'up', is_error: false, duration: 0.5 }],
    ['tool_complete', { tid: 'a', name: 'ls', preview: 'here', is_error: true, duration: 0.1 }],
    ['token', { text: 'Done.' }],
    ['done', {}]
  ]);
  const state = foldEvents(rows, 'r1');
  assert.deepEqual(
    state.rows.map(r => r.kind),
    ['assistant', 'tool', 'tool', 'assistant']
  );
  const [first, a, b, last] = state.rows as any[];
  assert.equal(first.text, 'Let me look.');
  assert.equal(first.reasoning, 'I should look.');
  assert.equal(first.streaming, false);
  assert.deepEqual([a.preview, a.isError, b.preview, b.isError], ['here', true, 'up', false]);
  assert.equal(last.text, 'Done.');
  assert.equal(state.terminal?.event, 'done');
});

test('a replayed or overlapping row never duplicates text', () => {
  const rows = journal('r2', [
    ['token', { text: '1' }],
    ['token', { text: ' 2' }],
    ['token', { text: ' 3' }]
  ]);
  let state = foldEvents(rows.slice(0, 2), 'r2');
  for (const row of rows) {
    state = applyEvent(state, row);
  }
  assert.equal((state.rows[0] as any).text, '1 2 3');
  assert.equal((state.rows[0] as any).streaming, true);
  assert.equal(state.lastSeq, 3);
});

test('cancel keeps the partial text and adds a cancel marker', () => {
  const state = foldEvents(
    journal('r3', [
      ['token', { text: 'partial' }],
      ['cancel', { message: 'Cancelled by user' }]
    ]),
    'r3'
  );
  assert.equal(state.rows.length, 2);
  const marker = state.rows[1] as any;
  assert.equal(marker.kind, 'marker');
  assert.equal(marker.variant, 'cancel');
  assert.match(marker.text, /Task cancelled/);
});

test('an interrupted apperror becomes an interrupted marker, never an answer', () => {
  const state = foldEvents(
    journal('r4', [
      ['token', { text: 'half' }],
      ['apperror', { type: 'interrupted', interruption_cause: 'kernel_restart', message: 'x' }]
    ]),
    'r4'
  );
  const marker = state.rows[state.rows.length - 1] as any;
  assert.equal(marker.variant, 'interrupted');
  assert.equal(marker.cause, 'kernel_restart');
  assert.match(marker.text, /^\*\*Response interrupted\.\*\*/);
  assert.match(marker.text, /partial output above was recovered from the run journal/);
});

test('interim_assistant closes a segment and does not repeat streamed text', () => {
  const state = foldEvents(
    journal('r5', [
      ['token', { text: 'streamed' }],
      ['interim_assistant', { text: 'streamed', already_streamed: true }],
      ['interim_assistant', { text: 'fresh', already_streamed: false }],
      ['done', {}]
    ]),
    'r5'
  );
  assert.deepEqual(
    state.rows.map(r => (r as any).text),
    ['streamed', 'fresh']
  );
});

test('an empty run has no output', () => {
  assert.equal(hasOutput(emptyTranscript('x')), false);
});

test('a completion without tid pairs with the newest open card of that name that has none', () => {
  const state = foldEvents(
    journal('r6', [
      ['tool', { tid: 'p1', name: 'ls' }],
      ['tool', { name: 'ls' }],
      ['tool_complete', { name: 'ls', preview: 'untagged' }],
      ['tool_complete', { tid: 'p1', name: 'ls', preview: 'tagged' }]
    ]),
    'r6'
  );
  const cards = state.rows as any[];
  assert.deepEqual(
    cards.map(c => [c.tid, c.done, c.preview]),
    [
      ['p1', true, 'tagged'],
      ['journal-2', true, 'untagged']
    ]
  );
});

test('an approval is a card with its options until answered, then records the answer', () => {
  const asked = journal('r9', [
    ['token', { text: 'May I?' }],
    ['approval', { approval_id: 'a1', status: 'pending', command: 'rm -rf x', description: 'delete x', options: ['allow_once', 'deny'] }]
  ]);
  let state = foldEvents(asked, 'r9');
  const card = state.rows[1] as any;
  assert.equal(card.kind, 'tool');
  assert.equal(card.done, false);
  assert.deepEqual(card.approval, { id: 'a1', runId: 'r9', options: ['allow_once', 'deny'] });
  state = applyEvent(state, journal('r9', [
    ['token', { text: '' }],
    ['token', { text: '' }],
    ['approval', { approval_id: 'a1', status: 'resolved', choice: 'deny', reason: 'expired' }]
  ])[2]);
  const answered = state.rows[1] as any;
  assert.equal(answered.done, true);
  assert.equal(answered.isError, true);
  assert.equal(answered.approval.choice, 'deny');
  assert.equal(answered.approval.reason, 'expired');
});
