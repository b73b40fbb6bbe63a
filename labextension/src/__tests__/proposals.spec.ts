import assert from 'node:assert/strict';
import { test } from 'node:test';

import { AttachmentsModel, MAX_ATTACHMENT_CHARS, MAX_ATTACHMENTS, attachmentTitle } from '../model/attachments';
import { lineDiff } from '../model/line-diff';

test('a replacement diff keeps common lines and marks removed and added ones', () => {
  const diff = lineDiff('import pandas\ndf = load()\ndf.head()', 'import pandas\ndf = load("x.csv")\ndf.head()');
  assert.deepEqual(diff.map(l => `${l.op}:${l.text}`), [
    'same:import pandas', 'remove:df = load()', 'add:df = load("x.csv")', 'same:df.head()'
  ]);
  assert.deepEqual(lineDiff('', 'a').map(l => l.op), ['remove', 'add']);
});

test('attachments are cut to the cap, attached once each, and limited in number', () => {
  const model = new AttachmentsModel();
  assert.equal(model.add({ kind: 'file', label: 'big.txt', text: 'x'.repeat(MAX_ATTACHMENT_CHARS + 5) }), true);
  assert.match(model.items[0].text, /\[5 more characters not attached\]$/);
  model.add({ kind: 'cell', label: 'In [1]', text: '1/0' });
  model.add({ kind: 'cell', label: 'In [1]', text: '1/0' });
  assert.equal(model.items.length, 2);
  for (let i = 0; model.items.length < MAX_ATTACHMENTS; i++) {
    model.add({ kind: 'variable', label: `v${i}`, text: String(i) });
  }
  assert.equal(model.add({ kind: 'variable', label: 'one too many', text: '' }), false);
  assert.match(model.problem ?? '', /at most 8 attachments/);
  model.remove(0);
  assert.equal(model.items.length, MAX_ATTACHMENTS - 1);
  assert.equal(attachmentTitle(model.items[0]), 'cell In [1]');
});
