import assert from 'node:assert/strict';
import { test } from 'node:test';

import { groupByNotebook } from '../model/sessions';

test('sessions are grouped by notebook, groups ordered by their newest session', () => {
  const groups = groupByNotebook([
    { session_id: 'a', notebook_path: 'b.ipynb' },
    { session_id: 'b', subtitle: 'a.ipynb', notebook_path: 'a.ipynb' },
    { session_id: 'c' },
    { session_id: 'd', notebook_path: 'b.ipynb' }
  ]);
  assert.deepEqual(
    groups.map(g => [g.notebook, g.sessions.map(s => s.session_id)]),
    [
      ['b.ipynb', ['a', 'd']],
      ['a.ipynb', ['b']],
      ['', ['c']]
    ]
  );
});
