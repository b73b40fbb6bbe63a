import assert from 'node:assert/strict';
import { test } from 'node:test';

import { IJournalRow } from '../api/contract';
import { LiveTranscript } from '../model/transcript';
import { journal } from './rows';

function fold(runId: string, rows: IJournalRow[]): LiveTranscript {
  const live = new LiveTranscript(runId);
  rows.forEach(row => live.apply(row));
  return live;
}

const shape = (live: LiveTranscript) => live.rows.map(r => r.id.slice(r.id.indexOf(':') + 1));

test('text splits at tools into numbered segments, reasoning before its text', () => {
  const live = fold('r1', journal('r1', [
    ['token', { text: ' Let me ' }],
    ['reasoning', { text: 'I should look.' }],
    ['token', { text: 'look. ' }],
    ['tool', { tid: 'a', name: 'ls', args: { path: '.' } }],
    ['tool_complete', { tid: 'a', name: 'ls', preview: 'here', is_error: true, duration: 0.1 }],
    ['token', { text: 'Done.' }]
  ]));
  assert.deepEqual(shape(live), ['r:0', 'a:0', 'tool:a', 'a:1']);
  assert.equal((live.rows[1] as any).text, 'Let me look.');
  assert.deepEqual([(live.rows[2] as any).status, (live.rows[2] as any).duration_s], ['error', 0.1]);
  assert.equal(live.streamingId, 'r1:a:1');
});

test('a replayed or overlapping row never duplicates text', () => {
  const rows = journal('r2', [['token', { text: '1' }], ['token', { text: ' 2' }], ['token', { text: ' 3' }]]);
  const live = fold('r2', rows.slice(0, 2));
  rows.forEach(row => live.apply(row));
  assert.equal((live.rows[0] as any).text, '1 2 3');
  assert.equal(live.lastSeq, 3);
});

test('a tool and an approval sharing an id are two cards, and the tool ends done after the approval', () => {
  const live = fold('r3', journal('r3', [
    ['tool', { tid: 'x', name: 'terminal' }],
    ['approval', { approval_id: 'x', status: 'pending', choices: ['allow_once', 'deny'] }],
    ['approval', { approval_id: 'x', status: 'resolved', choice: 'allow_once', reason: 'answered' }],
    ['tool_complete', { tid: 'x', name: 'terminal', is_error: false }]
  ]));
  assert.deepEqual(live.rows.map(r => [r.kind, (r as any).status]), [['tool', 'done'], ['approval', 'resolved']]);
  assert.equal((live.rows[1] as any).choice, 'allow_once');
});

test('a completion without tid pairs with the newest running card of that name that has none', () => {
  const live = fold('r4', journal('r4', [
    ['tool', { tid: 'p1', name: 'ls' }],
    ['tool', { name: 'ls' }],
    ['tool_complete', { name: 'ls', preview: 'untagged' }],
    ['tool_complete', { tid: 'p1', name: 'ls', preview: 'tagged' }]
  ]));
  assert.deepEqual(live.rows.map(r => [(r as any).tid, (r as any).status, (r as any).preview]), [
    ['p1', 'done', 'tagged'],
    ['journal-2', 'done', 'untagged']
  ]);
});

test('a terminal row carries its marker; the fold copies it and words nothing', () => {
  const marker = { variant: 'cancelled', text: 'Stopped by you.', cause: null };
  const live = fold('r5', journal('r5', [['token', { text: 'partial' }], ['cancel', { marker }]]));
  assert.deepEqual(live.rows[1], { kind: 'marker', id: 'r5:marker', ...marker });
  assert.equal(live.ended, true);
  assert.equal(live.streamingId, null);
});

test("a foreign terminal row without a marker shows its message as an error", () => {
  const live = fold('r6', journal('r6', [['apperror', { type: 'provider', message: 'The provider failed.' }]]));
  assert.deepEqual(live.rows, [
    { kind: 'marker', id: 'r6:marker', variant: 'error', text: 'The provider failed.', cause: null }
  ]);
});

test('the tool-call limit completes the run with a warning note, not an error', () => {
  const live = fold('r7', journal('r7', [['apperror', { type: 'tool_limit_reached', message: 'Too many tools.' }]]));
  assert.deepEqual(live.rows, [
    { kind: 'note', id: 'r7:note:1', variant: 'status', level: 'warning', text: 'Too many tools.' }
  ]);
});

test('cards nobody answered are shown resolved at the end of the run', () => {
  const live = fold('r8', journal('r8', [
    ['approval', { approval_id: 'a', status: 'pending', choices: ['deny'] }],
    ['clarify', { clarify_id: 'q', status: 'pending', question: 'Why?' }],
    ['done', {}]
  ]));
  assert.deepEqual(live.rows.map(r => [(r as any).status, (r as any).choice ?? (r as any).answer, (r as any).answered_by]), [
    ['resolved', 'deny', { kind: 'timeout' }],
    ['resolved', null, { kind: 'timeout' }]
  ]);
});

test('an answer keeps who gave it; one without (an old journal) says nobody', () => {
  const live = fold('r8b', journal('r8b', [
    ['approval', { approval_id: 'a', status: 'pending', choices: ['allow_once', 'deny'] }],
    ['approval', { approval_id: 'a', status: 'resolved', choice: 'allow_once', reason: 'answered',
      answered_by: { kind: 'person', user: 'alice' } }],
    ['clarify', { clarify_id: 'q', status: 'pending', question: 'Why?' }],
    ['clarify', { clarify_id: 'q', status: 'resolved', answer: 'because', reason: 'answered',
      answered_by: { kind: 'person', user: 7 } }],
    ['approval', { approval_id: 'b', status: 'pending', choices: ['deny'] }],
    ['approval', { approval_id: 'b', status: 'resolved', choice: 'deny', reason: 'expired' }]
  ]));
  assert.deepEqual(live.rows.map(r => (r as any).answered_by), [
    { kind: 'person', user: 'alice' }, { kind: 'person' }, null
  ]);
});

test('a stop while a tool waits for its approval: the approval is not answered and the tool ends', () => {
  const stopped = fold('r8c', journal('r8c', [
    ['tool', { tid: 't', name: 'terminal', args: { command: 'rm x' } }],
    ['approval', { approval_id: 'a', status: 'pending', choices: ['allow_once', 'deny'] }],
    ['apperror', { type: 'interrupted', cause: 'server_shutdown', marker: { variant: 'interrupted', text: 'Stopped.' } }]
  ]));
  const nobody = { status: 'resolved', choice: 'deny', reason: 'not answered before the run ended', answered_by: { kind: 'timeout' } };
  assert.deepEqual(stopped.rows.map(r => (r as any).status), ['error', 'resolved', undefined]);
  assert.deepEqual({ ...stopped.rows[1], ...nobody }, stopped.rows[1]);
  const lost = fold('r8d', journal('r8d', [['tool', { tid: 't', name: 'terminal' }]]));
  assert.equal((lost.rows[0] as any).status, 'running');  // live: still running
  lost.verdict({ run_id: 'r8d', session_id: 's', status: 'interrupted', last_seq: 1, marker: null });
  assert.equal((lost.rows[0] as any).status, 'error');  // the server says the run is over: it ended
  const done = fold('r8e', journal('r8e', [['tool', { tid: 't', name: 'terminal' }], ['done', {}]]));
  assert.equal((done.rows[0] as any).status, 'done');
});

test('a later plan replaces the items in place; usage is one quiet row', () => {
  const live = fold('r9', journal('r9', [
    ['plan', { items: [{ text: 'a', status: 'pending' }] }],
    ['token', { text: 'working' }],
    ['plan', { items: [{ text: 'a', status: 'completed' }] }],
    ['usage', { input_tokens: 3, output_tokens: 4 }],
    ['usage', { input_tokens: 5, output_tokens: 6, model: 'm' }]
  ]));
  assert.deepEqual(shape(live), ['plan', 'a:0', 'usage']);
  assert.deepEqual((live.rows[0] as any).items, [{ text: 'a', status: 'completed' }]);
  assert.equal((live.rows[2] as any).output_tokens, 6);
});

test('a run settled without a settled message takes the marker of GET runs/{id}', () => {
  const live = fold('r10', journal('r10', [['token', { text: 'half' }]]));
  live.verdict({
    run_id: 'r10', session_id: 's', status: 'interrupted', last_seq: 1,
    marker: { variant: 'interrupted', text: 'The server restarted.', cause: 'server_restart' }
  });
  assert.equal(live.status, 'interrupted');
  assert.deepEqual(live.rows[1], {
    kind: 'marker', id: 'r10:marker', variant: 'interrupted', text: 'The server restarted.', cause: 'server_restart'
  });
});

test('unchanged rows keep their identity when the verdict replaces the rows', () => {
  const live = fold('r11', journal('r11', [['token', { text: 'same' }]]));
  const before = live.rows[0];
  live.settle({
    settled: true, run_id: 'r11', session_id: 's', status: 'completed', bundle: {},
    transcript: { run_id: 'r11', session_id: 's', status: 'completed', last_seq: 1, rows: [{ kind: 'assistant', id: 'r11:a:0', text: 'same' }] }
  });
  assert.equal(live.rows[0], before);
  assert.equal(live.apply(journal('r11', [['token', {}], ['token', { text: 'late' }]])[1]), false);
});
