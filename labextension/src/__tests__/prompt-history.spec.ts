import assert from 'node:assert/strict';
import { test } from 'node:test';

import { PromptHistory } from '../components/composer/history';

test('ArrowUp in an empty box recalls the prompts sent before, newest first', () => {
  const history = new PromptHistory();
  history.add('count to 3');
  history.add('use a tool');
  assert.equal(history.older(''), 'use a tool');
  assert.equal(history.older('use a tool'), 'count to 3');
  assert.equal(history.older('count to 3'), null); // nothing older: the caret moves instead
  assert.equal(history.newer('count to 3'), 'use a tool');
  assert.equal(history.newer('use a tool'), ''); // past the newest: the empty box again
  assert.equal(history.newer(''), null);
});

test('arrow keys leave a prompt being written alone', () => {
  const history = new PromptHistory();
  history.add('count to 3');
  assert.equal(history.older('my own draft'), null);
  assert.equal(history.older(''), 'count to 3');
  assert.equal(history.older('count to 3, edited'), null); // the recalled text was edited: no more recall
  assert.equal(history.newer('count to 3, edited'), null);
});

test('a prompt sent twice in a row is recalled once', () => {
  const history = new PromptHistory();
  history.add('hello');
  history.add('hello');
  assert.equal(history.older(''), 'hello');
  assert.equal(history.older('hello'), null);
});
