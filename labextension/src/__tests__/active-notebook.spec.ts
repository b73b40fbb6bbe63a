import assert from 'node:assert/strict';
import { test } from 'node:test';

import { isBoundTo } from '../model/active-notebook';

const open = { path: 'work/sales.ipynb', name: 'sales.ipynb', kernelId: 'k-1' };

test('a session is bound to the open notebook only with its path and its kernel', () => {
  assert.equal(isBoundTo({ session_id: 's', notebook_path: 'work/sales.ipynb', kernel_id: 'k-1' }, open), true);
  // another kernel (the notebook was reopened): binding again gives the runs the live kernel
  assert.equal(isBoundTo({ session_id: 's', notebook_path: 'work/sales.ipynb', kernel_id: 'k-0' }, open), false);
  assert.equal(isBoundTo({ session_id: 's', notebook_path: 'sales.ipynb', kernel_id: 'k-1' }, open), false);
  assert.equal(isBoundTo({ session_id: 's' }, open), false);
  assert.equal(isBoundTo({ session_id: 's', notebook_path: 'work/sales.ipynb' }, { ...open, kernelId: null }), true);
});
