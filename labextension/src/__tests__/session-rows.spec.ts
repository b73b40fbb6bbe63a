import assert from 'node:assert/strict';
import { test } from 'node:test';

import { ISession } from '../api/contract';
import { recoveredAfterRestart, sessionRows } from '../model/session-rows';
import { sortSessions } from '../model/sessions';

const session: ISession = {
  session_id: 's1',
  messages: [
    { role: 'user', content: 'List the files', _recovered: true },
    { role: 'assistant', content: 'Let me look.', reasoning: 'ls', _recovered_from_run_journal: true },
    { role: 'assistant', content: 'There is one file.' },
    {
      role: 'assistant',
      content: '**Response interrupted.**\n\nThe live response stream stopped before this turn finished.',
      _error: true,
      type: 'interrupted',
      interruption_cause: 'server_restart'
    },
    { role: 'assistant', content: '**Task cancelled.**', _error: true, type: 'cancelled' }
  ],
  tool_calls: [{ tid: 'journal-4', name: 'terminal', assistant_msg_idx: 1, done: true, preview: 'foo' }]
};

test('session messages map to rows with tool cards after their anchor', () => {
  const rows = sessionRows(session);
  assert.deepEqual(
    rows.map(r => (r.kind === 'marker' ? `marker:${r.variant}` : r.kind)),
    ['user', 'reasoning', 'assistant', 'tool', 'assistant', 'marker:interrupted', 'marker:cancelled']
  );
  assert.equal((rows[0] as any).recovered, true);
  assert.equal((rows[5] as any).cause, 'server_restart');
});

test('a server restart recovery is detected for the banner', () => {
  assert.equal(recoveredAfterRestart(sessionRows(session)), true);
  assert.equal(recoveredAfterRestart(sessionRows({ session_id: 'x', messages: [{ role: 'user', content: 'hi' }] })), false);
});

test('sessions sort newest first', () => {
  const sorted = sortSessions([
    { session_id: 'a', updated_at: 1 },
    { session_id: 'b', updated_at: 3 },
    { session_id: 'c', created_at: 2 }
  ]);
  assert.deepEqual(sorted.map(s => s.session_id), ['b', 'c', 'a']);
});

test('a settled approval card keeps how it was answered', () => {
  const rows = sessionRows({
    session_id: 's',
    messages: [
      { role: 'user', content: 'clean up' },
      { role: 'assistant', content: 'May I?' }
    ],
    tool_calls: [
      { name: 'approval', tid: 'a1', done: true, is_error: false, choice: 'allow_once', reason: 'answered', assistant_msg_idx: 1, _run_id: 'r1' }
    ]
  } as any);
  const card = rows.find(r => r.kind === 'approval') as any;
  assert.deepEqual([card.status, card.choice, card.approval_id], ['resolved', 'allow_once', 'a1']);
});

test("a run seen to settle shows the server's rows in place of its stored reply and cards", () => {
  const stored = {
    session_id: 's',
    messages: [
      { role: 'user', content: 'plan it', _run_id: 'r1' },
      { role: 'assistant', content: 'Done.', _run_id: 'r1' },
      { role: 'user', content: 'again' },
      { role: 'assistant', content: 'Older reply.' }
    ],
    tool_calls: [{ name: 'ls', tid: 't1', assistant_msg_idx: 1, _run_id: 'r1' }]
  } as any;
  const verdict = [
    { kind: 'plan' as const, id: 'r1:plan', items: [{ text: 'a', status: 'completed' as const }] },
    { kind: 'assistant' as const, id: 'r1:a:0', text: 'Done.' },
    { kind: 'usage' as const, id: 'r1:usage', input_tokens: 1, output_tokens: 2, cached_tokens: null,
      cost_usd: null, duration_s: null, model: null, our_count: false }
  ];
  const rows = sessionRows(stored, new Map([['r1', verdict]]));
  assert.deepEqual(rows.map(r => r.id), ['s:s:0', 'r1:plan', 'r1:a:0', 'r1:usage', 's:s:2', 's:s:3']);
  assert.deepEqual(sessionRows(stored).map(r => r.kind), ['user', 'assistant', 'tool', 'user', 'assistant']);
});

test('replies of a kept run carry the partial tag the server stored', () => {
  const stored = {
    session_id: 's',
    messages: [{ role: 'assistant', content: '1 2', _run_id: 'r2', _partial: true }]
  } as any;
  const rows = sessionRows(stored, new Map([['r2', [{ kind: 'assistant' as const, id: 'r2:a:0', text: '1 2' }]]]));
  assert.deepEqual(rows, [{ kind: 'assistant', id: 'r2:a:0', text: '1 2', partial: true, recovered: false }]);
});
