/**
 * The variable picker lists what the kernel has (name, type, size) so nobody types a name.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import React from 'react';
import { renderToStaticMarkup } from 'react-dom/server';

import { PickerState, VariableList, matching } from '../components/composer/variable-picker';

const none = () => undefined;
const view = (state: PickerState, selected: string | null = null, filter = '') =>
  renderToStaticMarkup(
    <VariableList state={state} selected={selected} filter={filter} onFilter={none} onSelect={none} onChoose={none} />
  );

const LISTING = {
  variables: [
    { name: 'df', type: 'pandas.DataFrame', size: '4 × 3' },
    { name: 'n', type: 'int' }
  ],
  more: 0
};

test('each variable is a row with its name, type and size; the selected one is marked', () => {
  const html = view({ status: 'ready', listing: LISTING }, 'df');
  assert.match(html, /data-name="df"[^>]*>.*?<span class="jp-HermesVariables-name">df<\/span><span class="jp-HermesVariables-type">pandas\.DataFrame<\/span><span class="jp-HermesVariables-size">4 × 3<\/span>/);
  assert.match(html, /aria-selected="true"[^>]*data-name="df"/);
  assert.match(html, /aria-selected="false"[^>]*data-name="n"/);
  assert.doesNotMatch(html, /Filter variables/); // a short list needs no filter
});

test('loading, failure, an empty kernel and a cut listing are said in plain words', () => {
  assert.match(view({ status: 'loading' }), /data-state="loading"/);
  assert.match(view({ status: 'failed', message: 'This notebook has no running kernel.' }), /role="alert">This notebook has no running kernel\./);
  assert.match(view({ status: 'ready', listing: { variables: [], more: 0 } }), /no variables yet/);
  assert.match(view({ status: 'ready', listing: { ...LISTING, more: 3 } }), /3 more variables are not listed/);
});

test('a long list gets a filter, matching name or type', () => {
  const variables = Array.from({ length: 12 }, (_, i) => ({ name: `v${i}`, type: i === 5 ? 'numpy.ndarray' : 'int' }));
  assert.match(view({ status: 'ready', listing: { variables, more: 0 } }), /aria-label="Filter variables"/);
  assert.deepEqual(matching(variables, 'NDARRAY').map(r => r.name), ['v5']);
  assert.equal(matching(variables, ' ').length, 12);
  assert.match(view({ status: 'ready', listing: { variables, more: 0 } }, null, 'zzz'), /No variable matches/);
});
