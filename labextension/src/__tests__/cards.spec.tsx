/**
 * The §9 cards render what their rows say (server-side rendering: no DOM needed).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import React from 'react';
import { renderToStaticMarkup } from 'react-dom/server';

import { ApprovalCard } from '../components/cards/approval-card';
import { CardActions } from '../components/cards/card-actions';
import { ClarifyCard } from '../components/cards/clarify-card';
import { Note, UsageFooter } from '../components/cards/notes';
import { PlanChecklist } from '../components/cards/plan';
import { ProposalCard } from '../components/cards/proposal-card';
import { ToolCard } from '../components/cards/tool-card';

const html = (element: JSX.Element) => renderToStaticMarkup(element);

test('a plan is a checklist with each item in its state', () => {
  const out = html(
    <PlanChecklist row={{ kind: 'plan', id: 'r:plan', items: [
      { text: 'Load', status: 'completed' }, { text: 'Plot', status: 'in_progress' }] }} />
  );
  assert.match(out, /data-status="completed"[^]*Load[^]*data-status="in_progress"[^]*Plot/);
});

test('a pending question shows its choices, disabled until a view can answer', () => {
  const row = { kind: 'clarify' as const, id: 'r:clarify:q', clarify_id: 'q', question: 'Which file?',
    choices: ['a.csv', 'b.csv'], status: 'pending' as const, answer: null, reason: null, answered_by: null };
  assert.match(html(<ClarifyCard row={row} />), /Which file\?[^]*disabled=""[^]*a\.csv/);
  const answerable = html(
    <CardActions.Provider value={{ answerClarify: async () => null }}><ClarifyCard row={row} /></CardActions.Provider>
  );
  assert.doesNotMatch(answerable, /<button type="button"[^>]*disabled/);  // the choices can be clicked
  assert.match(answerable, /data-testid="hermes-clarify-text"/);  // and an answer typed
  assert.match(html(<ClarifyCard row={{ ...row, status: 'resolved' }} />), />Not answered</);
  assert.match(html(<ClarifyCard row={{ ...row, status: 'resolved', answer: 'b.csv' }} />), /Answered: b\.csv/);
  const alice = { kind: 'person' as const, user: 'alice' };
  assert.match(html(<ClarifyCard row={{ ...row, status: 'resolved', answer: 'b.csv', answered_by: alice }} />),
    /data-answered-by="person"[^>]*>Answered by alice: b\.csv</);
  const late = { ...row, status: 'resolved' as const, reason: 'expired', answered_by: { kind: 'timeout' as const } };
  assert.match(html(<ClarifyCard row={late} />), />Not answered in time</);

});

test('usage is one quiet line; notes keep their level', () => {
  const usage = html(<UsageFooter row={{ kind: 'usage', id: 'r:usage', input_tokens: 1200, output_tokens: 30,
    cached_tokens: null, cost_usd: 0.0012, duration_s: 2.5, model: 'm1', our_count: false }} />);
  assert.match(usage, /m1 · 1,200 tokens in · 30 out · 2\.5 s · \$0\.0012/);
  const note = html(<Note row={{ kind: 'note', id: 'r:note:3', variant: 'compaction', level: 'info', text: 'Compacted.' }} />);
  assert.match(note, /data-variant="compaction"[^]*Compacted\./);
});

test('an answered approval and its done tool are two cards with their own states', () => {
  const tool = html(<ToolCard row={{ kind: 'tool', id: 'r:tool:t', tid: 't', name: 'terminal', args: null,
    preview: 'ok', status: 'done', duration_s: 0 }} />);
  assert.match(tool, /data-state="done"/);
  const approval = html(<ApprovalCard row={{ kind: 'approval', id: 'r:approval:a', approval_id: 'a',
    description: 'Delete', command: 'rm x', choices: ['allow_once', 'deny'], status: 'resolved',
    choice: 'allow_once', reason: 'answered', answered_by: null }} />);
  assert.match(approval, /data-state="resolved"[^]*Allowed once<[^]*data-choice="allow_once"/);
});

test('an answered approval says who answered, in the server\'s words', () => {
  const row = { kind: 'approval' as const, id: 'r:approval:a', approval_id: 'a', description: 'Delete',
    command: 'rm x', choices: ['allow_once', 'allow_session', 'deny'], status: 'resolved' as const,
    choice: 'allow_once', reason: 'answered', answered_by: null };
  const says = (changes: object) => html(<ApprovalCard row={{ ...row, ...changes }} />);
  assert.match(says({ answered_by: { kind: 'person', user: 'alice' } }), /Allowed once by alice/);
  assert.match(says({ choice: 'allow_session', answered_by: { kind: 'person', user: 'alice' } }),
    /Allowed for this session by alice/);
  assert.match(says({ choice: 'deny', answered_by: { kind: 'person', user: 'bob' } }), /Denied by bob/);
  assert.match(says({ answered_by: { kind: 'policy' } }), /Allowed by a standing rule/);
  assert.match(says({ choice: 'deny', reason: 'expired', answered_by: { kind: 'timeout' } }), /Not answered in time/);
  const ended = says({ choice: 'deny', reason: 'not answered before the run ended', answered_by: { kind: 'timeout' } });
  assert.match(ended, /Not answered/);
  assert.doesNotMatch(ended, /Denied|Deny/);
  assert.match(says({ choice: 'deny', reason: 'expired' }), /Denied \(expired\)/);  // an old row: no "by"
});

test('a proposed replacement shows its diff; without a notebook to apply it, Accept is disabled', () => {
  const row = { kind: 'proposal' as const, id: 'r:proposal:p', proposal_id: 'p', action: 'replace' as const,
    cell_id: 'c', cell_type: 'code' as const, source: 'x = 2', old_source: 'x = 1', status: 'pending' as const,
    answered_by: null };
  const out = html(<ProposalCard row={row} />);
  assert.match(out, /New source for a code cell/);
  assert.match(out, /jp-mod-remove[^]*x = 1[^]*jp-mod-add[^]*x = 2/);
  assert.match(out, /data-testid="hermes-proposal-accept"[^>]*disabled=""/);
  const decided = html(<ProposalCard row={{ ...row, status: 'rejected' }} />);
  assert.match(decided, /Rejected: the notebook was left as it was/);
  assert.doesNotMatch(decided, /hermes-proposal-accept/);
  const accepted = html(<ProposalCard row={{ ...row, status: 'accepted', answered_by: { kind: 'person', user: 'alice' } }} />);
  assert.match(accepted, /Accepted by alice: the cell is in the notebook \(not run\)/);
});
