import assert from 'node:assert/strict';
import { test } from 'node:test';

import type { IAttachment, ISessionSummary } from '../api/contract';
import { CELL_PROMPTS, cellTurn, errorText, isHermesCell, notebookTurnTarget } from '../model/cell-turn';

const sessions: ISessionSummary[] = [
  { session_id: 'other-new', notebook_path: 'other.ipynb', updated_at: 50 },
  { session_id: 'free', updated_at: 40 },
  { session_id: 'sales-old', notebook_path: 'work/sales.ipynb', updated_at: 10 },
  { session_id: 'sales-new', notebook_path: 'work/sales.ipynb', updated_at: 30 },
  { session_id: 'sales-cell', notebook_path: 'work/sales.ipynb', created_at: 20 }
];

test("a cell's turn goes to its notebook's newest session, never to one selected for another notebook or none", () => {
  assert.equal(notebookTurnTarget(sessions, 'work/sales.ipynb', null), 'sales-new');
  assert.equal(notebookTurnTarget(sessions, 'work/sales.ipynb', 'other-new'), 'sales-new');
  assert.equal(notebookTurnTarget(sessions, 'work/sales.ipynb', 'free'), 'sales-new');
  // the selected session is this notebook's: it is the one the person is looking at
  assert.equal(notebookTurnTarget(sessions, 'work/sales.ipynb', 'sales-old'), 'sales-old');
});

test('a notebook with no session of its own gets a new one (bound to it)', () => {
  assert.equal(notebookTurnTarget(sessions, 'sales.ipynb', 'free'), 'create');
  assert.equal(notebookTurnTarget(sessions, 'new.ipynb', 'other-new'), 'create');
  assert.equal(notebookTurnTarget([], 'new.ipynb', null), 'create');
});

const cell: IAttachment = { kind: 'cell', label: 'In [2]', text: 'ratio = 1 / 0', path: 'work/sales.ipynb', cell_id: 'c2' };
const failed = [
  { output_type: 'stream' },
  { output_type: 'error', ename: 'ZeroDivisionError', evalue: 'division by zero',
    traceback: ['\x1b[0;31mZeroDivisionError\x1b[0m Traceback', '----> 1 ratio = 1 / 0', 'ZeroDivisionError: division by zero'] }
];

test('Explain sends the source alone; Fix and Ask send the source with the traceback, without terminal colours', () => {
  assert.deepEqual(cellTurn('explain', cell, failed), { message: 'Explain this cell.', attachments: [cell] });
  const traceback = 'ZeroDivisionError Traceback\n----> 1 ratio = 1 / 0\nZeroDivisionError: division by zero';
  assert.deepEqual(cellTurn('fix', cell, failed), { message: 'Fix this cell.', attachments: [{ ...cell, output: traceback }] });
  assert.deepEqual(cellTurn('ask', cell, failed), { message: CELL_PROMPTS.ask, attachments: [{ ...cell, output: traceback }] });
});

test('Fix and Ask need an error output; an error without a traceback is named by its name and value', () => {
  assert.equal(cellTurn('fix', cell, [{ output_type: 'stream' }]), null);
  assert.equal(cellTurn('ask', cell, []), null);
  assert.equal(errorText([{ output_type: 'error', ename: 'KeyError', evalue: "'x'", traceback: [] }]), "KeyError: 'x'");
  assert.equal(isHermesCell('%%hermes\nexplain'), true);
  assert.equal(isHermesCell('  %hermes hi'), true);
  assert.equal(isHermesCell('print("%hermes")'), false);
});
