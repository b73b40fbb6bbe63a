/**
 * A proposed deletion (delete_cell in Propose mode, docs/autonomy.md): its own action in the fold, a card
 * that says which cell goes and shows its lines removed, and words that say it was deleted once accepted.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import React from 'react';
import { renderToStaticMarkup } from 'react-dom/server';

import { ProposalCard } from '../components/cards/proposal-card';
import { proposalRow } from '../model/fold-rows';

const row = { kind: 'proposal' as const, id: 'r:proposal:p', proposal_id: 'p', action: 'delete' as const,
  cell_id: 'c', cell_type: 'code' as const, source: '', old_source: 'x = 1\nprint(x)', status: 'pending' as const,
  answered_by: null };

test('a proposed deletion names the cell and shows its lines as removed', () => {
  const out = renderToStaticMarkup(<ProposalCard row={row} />);
  assert.match(out, /Delete a code cell/);
  assert.match(out, /jp-mod-remove[^]*x = 1[^]*jp-mod-remove[^]*print\(x\)/);
  assert.doesNotMatch(out, /jp-mod-add/);
  const accepted = renderToStaticMarkup(
    <ProposalCard row={{ ...row, status: 'accepted', answered_by: { kind: 'person', user: 'alice' } }} />);
  assert.match(accepted, /Accepted by alice: the cell was deleted from the notebook/);
});

test('the fold keeps a delete proposal a deletion (it was read as an insert at the end)', () => {
  const folded = proposalRow('r', { seq: 1, event: 'proposal', payload: { proposal_id: 'p', action: 'delete',
    cell_id: 'c', cell_type: 'code', source: '', old_source: 'x = 1' } } as never);
  assert.equal(folded.action, 'delete');
  assert.equal(folded.old_source, 'x = 1');
});
