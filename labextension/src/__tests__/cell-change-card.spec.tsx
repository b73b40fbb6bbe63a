/**
 * The card of a turn's changed cells, the autonomy picker, the approval's "Allow for this turn",
 * and Keep / Undo / Rewind against a fake server (server-side rendering: no DOM needed).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Signal } from '@lumino/signaling';
import React from 'react';
import { renderToStaticMarkup } from 'react-dom/server';

import type { HermesClient } from '../api/client';
import { ApprovalCard } from '../components/cards/approval-card';
import { CardActions } from '../components/cards/card-actions';
import type { ICellChangeActions } from '../components/cards/cell-change-actions';
import { CellChangeCard } from '../components/cards/cell-change-card';
import { AutonomyPicker } from '../components/composer/autonomy-picker';
import { RunAutonomy } from '../components/run-output/run-autonomy';
import { CellChangeReview } from '../model/cell-change-review';
import { ICellChangeGroup, groupCellChanges } from '../model/cell-changes';
import type { CellReview } from '../model/cell-review';
import { change } from './cell-change-rows';

const html = (element: JSX.Element) => renderToStaticMarkup(element);

function turn(): ICellChangeGroup {
  const rows = [
    change('r1', 'insert', 'c1', { after_source: 'import pandas as pd\nsales = pd.read_csv("sales.csv")' }),
    change('r1', 'edit', 'c0', { before_source: 'x = 1\ny = 2', after_source: 'x = 1\ny = 3' }),
    change('r1', 'run', 'c0', { after_source: 'x = 1\ny = 3', execution_count: 4, outputs_summary: '1 line of text' })
  ];
  return groupCellChanges(rows)[0] as ICellChangeGroup;
}

function fakeActions(review: CellReview, turns = 2): ICellChangeActions {
  return {
    changed: new Signal<unknown, void>({}),
    reviewOf: () => review,
    undo: async () => ({ restored: [], conflicts: [] }),
    keep: async () => undefined,
    rewindCount: () => turns,
    rewind: async () => ({ restored: [], conflicts: [] })
  };
}

test('a turn\'s card lists each changed cell with its diff and run, and Keep / Undo per cell and for the turn', () => {
  const out = html(
    <CardActions.Provider value={{ cellChanges: fakeActions('pending') }}><CellChangeCard group={turn()} /></CardActions.Provider>
  );
  assert.match(out, /data-hermes-cell-changes="r1"/);
  assert.match(out, /Changed 2 cells in nb\.ipynb/);
  assert.match(out, /data-hermes-action="keep-all"[^]*data-hermes-action="undo-all"/);
  assert.match(out, /data-hermes-cell-change="c1"[^]*Code cell: added[^]*jp-mod-add[^]*import pandas as pd/);
  assert.match(out, /data-hermes-cell-change="c0"[^]*Code cell: edited, ran[^]*jp-mod-remove[^]*y = 2[^]*jp-mod-add[^]*y = 3/);
  assert.match(out, /Ran \[4\]: 1 line of text/);
  assert.equal(out.match(/data-hermes-action="undo"/g)?.length, 2);
  assert.match(out, /data-hermes-action="rewind"[^>]*title="Undo the notebook changes of this turn and the one after it, newest first"[^>]*>Rewind to before this turn/);
  const last = html(
    <CardActions.Provider value={{ cellChanges: fakeActions('pending', 1) }}><CellChangeCard group={turn()} /></CardActions.Provider>
  );
  assert.doesNotMatch(last, /data-hermes-action="rewind"/);  // the newest such turn: that is Undo all
});

test('after an Undo that met an edit, the cell says it was left as it is and offers nothing more', () => {
  const out = html(
    <CardActions.Provider value={{ cellChanges: fakeActions('conflict') }}><CellChangeCard group={turn()} /></CardActions.Provider>
  );
  assert.match(out, /data-hermes-review="conflict"[^]*You or a collaborator changed this cell since; it was left as it is\./);
  assert.doesNotMatch(out, /data-hermes-action="(undo|keep|undo-all|keep-all)"/);
});

test('an undone cell says so and no longer shows the change it took back', () => {
  const out = html(
    <CardActions.Provider value={{ cellChanges: fakeActions('undone') }}><CellChangeCard group={turn()} /></CardActions.Provider>
  );
  assert.match(out, /data-hermes-review="undone"[^]*Undone: the cell is back as it was before this turn\./);
  assert.doesNotMatch(out, /data-hermes-diff|Ran \[4\]/);
});

test('without actions (no notebook support loaded) the card only displays', () => {
  const out = html(<CellChangeCard group={turn()} />);
  assert.match(out, /data-hermes-cell-change="c1"/);
  assert.doesNotMatch(out, /<button/);
});

test('the approval of a code run offers "Allow for this turn"', () => {
  const row = { kind: 'approval' as const, id: 'r:approval:a', approval_id: 'a', description: 'Run cell c0',
    command: 'y = 3', choices: ['allow_once', 'allow_turn', 'deny'], status: 'pending' as const, choice: null,
    reason: null, answered_by: null };
  const out = html(
    <CardActions.Provider value={{ answerApproval: async () => null }}><ApprovalCard row={row} /></CardActions.Provider>
  );
  assert.match(out, /data-hermes-choice="allow_turn"[^>]*>Allow for this turn</);
  const answered = html(<ApprovalCard row={{ ...row, status: 'resolved', choice: 'allow_turn',
    answered_by: { kind: 'person', user: 'alice' } }} />);
  assert.match(answered, /Allowed for this turn by alice/);
});

test('the autonomy picker shows the session\'s level and only the levels the server allows', () => {
  const capped = html(<AutonomyPicker session={{ session_id: 's', autonomy: 'agent', max_autonomy: 'agent' } as any}
    onChange={async () => null} />);
  assert.match(capped, /data-hermes-autonomy="agent"/);
  assert.match(capped, /aria-label="What Hermes may do in the notebook"/);
  assert.match(capped, />Ask<[^]*>Propose<[^]*>Agent</);
  assert.doesNotMatch(capped, /Agent, no asking/);
  const open = html(<AutonomyPicker session={{ session_id: 's' } as any} onChange={async () => null} />);
  assert.match(open, /data-hermes-autonomy="propose"/);
  assert.match(open, /Agent, no asking/);
});

/** A client that answers the notebook routes and remembers what was asked. */
function fakeClient(answers: { [run: string]: { restored: string[]; conflicts: string[] } }) {
  const calls: string[] = [];
  const client = {
    call: async (method: string, parts: string[], body?: unknown) => {
      calls.push(`${method} ${parts.join('/')} ${JSON.stringify(body)}`);
      return parts[3] === 'undo' ? answers[parts[1]] : {};
    }
  } as unknown as HermesClient;
  return { client, calls };
}

test('Undo shows restored and conflicting cells at once; Keep is recorded; Rewind undoes newest first', async () => {
  const rows = [change('r1', 'insert', 'a'), change('r1', 'edit', 'b'), change('r2', 'edit', 'a'), change('r3', 'run', 'c')];
  const { client, calls } = fakeClient({
    r1: { restored: ['a'], conflicts: ['b'] }, r2: { restored: ['a'], conflicts: [] }, r3: { restored: [], conflicts: [] }
  });
  const restored: string[][] = [];
  const review = new CellChangeReview({
    client, rows: () => rows, session: () => ({ cell_undo: { 'r3:c': 'kept' } }), sessionChanged: new Signal({}),
    restored: async changes => void restored.push(changes.map(c => `${c.tool_call_id}`))
  });
  const cell = (id: string) => ({ cell_id: id } as any);
  assert.equal(review.reviewOf('r3', cell('c')), 'kept');  // the server's record
  assert.equal(review.reviewOf('r1', cell('a')), 'pending');
  assert.equal(review.rewindCount('r2'), 2);
  const total = await review.rewind('r2');
  assert.deepEqual(calls, ['POST runs/r3/notebook/undo {}', 'POST runs/r2/notebook/undo {}']);
  assert.deepEqual(total, { restored: ['a'], conflicts: [] });
  await review.undo('r1', ['a', 'b']);
  assert.equal(calls[2], 'POST runs/r1/notebook/undo {"cell_ids":["a","b"]}');
  assert.equal(review.reviewOf('r1', cell('a')), 'undone');
  assert.equal(review.reviewOf('r1', cell('b')), 'conflict');
  assert.equal(restored.length, 2);  // r2's and r1's restored changes reach the open notebook
  await review.keep('r3');
  assert.equal(calls[3], 'POST runs/r3/notebook/keep {}');
});

test('a %%hermes cell\'s output header names the autonomy its run had, when the output says', () => {
  const payload = { run_id: 'r', session_id: 's', seq: 3, status: 'completed', autonomy: 'agent_auto' } as any;
  const out = html(<RunAutonomy payload={payload} />);
  assert.match(out, /data-hermes-run-autonomy="agent_auto"[^>]*>Agent, no asking</);
  assert.equal(html(<RunAutonomy payload={{ ...payload, autonomy: undefined }} />), '');
});

test('a level chosen here stays shown while the chat\'s copy of the session still has the old one', async () => {
  const sid = 'keep-choice';
  const picker = (session: object) => html(<AutonomyPicker session={{ session_id: sid, ...session } as any}
    onChange={async () => null} />);
  assert.match(picker({ autonomy: 'propose' }), /data-hermes-autonomy="propose"/);
  // What choosing does once the server accepted it (the select's onChange cannot fire without a DOM).
  const { rememberAutonomy } = await import('../components/composer/autonomy-picker');
  rememberAutonomy(sid, 'agent');
  assert.match(picker({ autonomy: 'propose' }), /data-hermes-autonomy="agent"/);  // a stale copy after a turn
  assert.match(picker({ autonomy: 'agent' }), /data-hermes-autonomy="agent"/);  // the server's copy says it
  assert.match(picker({ autonomy: 'ask' }), /data-hermes-autonomy="ask"/);  // later changed elsewhere: the server wins
});
