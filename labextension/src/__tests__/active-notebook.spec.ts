import assert from 'node:assert/strict';
import { test } from 'node:test';

import { bindingOf, isBoundTo } from '../model/active-notebook';

const open = { path: 'work/sales.ipynb', name: 'sales.ipynb', kernelId: 'k-1' };

test('a session is bound to the open notebook by its path: the server gives each run the notebook\'s kernel of now', () => {
  assert.equal(isBoundTo({ session_id: 's', notebook_path: 'work/sales.ipynb', kernel_id: 'k-1' }, open), true);
  // another kernel (Shut Down Kernel and a new one, a server restart): still bound, nothing to offer
  assert.equal(isBoundTo({ session_id: 's', notebook_path: 'work/sales.ipynb', kernel_id: 'k-0' }, open), true);
  assert.equal(isBoundTo({ session_id: 's', notebook_path: 'sales.ipynb', kernel_id: 'k-1' }, open), false);
  assert.equal(isBoundTo({ session_id: 's' }, open), false);
  assert.equal(isBoundTo({ session_id: 's', notebook_path: 'work/sales.ipynb' }, { ...open, kernelId: null }), true);
});

test('a new session is bound to the notebook in front, and to nothing without one', () => {
  assert.deepEqual(bindingOf(open), { notebook_path: 'work/sales.ipynb', kernel_id: 'k-1' });
  assert.deepEqual(bindingOf({ ...open, kernelId: null }), { notebook_path: 'work/sales.ipynb' });
  assert.deepEqual(bindingOf(null), {});
});
