/**
 * Usage is never invented: counts a provider did not report read "not reported", never 0.
 */
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { test } from 'node:test';
import React from 'react';
import { renderToStaticMarkup } from 'react-dom/server';

import { DisplayRow, IUsageRow } from '../api/rows';
import { UsageFooter } from '../components/cards/notes';
import { usageRow } from '../model/fold-rows';
import { usageWords } from '../model/usage-words';

const footer = (row: IUsageRow) => renderToStaticMarkup(<UsageFooter row={row} />);

test('a usage event without counts folds to nulls and reads "tokens not reported"', () => {
  const row = usageRow('r', { input_tokens: null, output_tokens: null, duration_s: 1.5, model: 'smol' });
  assert.equal(row.input_tokens, null);
  assert.equal(row.output_tokens, null);
  const text = footer(row);
  assert.match(text, /smol · tokens not reported · 1\.5 s/);
  assert.doesNotMatch(text, /\b0 in\b/);
});

test('reported counts still read as numbers', () => {
  assert.match(footer(usageRow('r', { input_tokens: 3, output_tokens: 4 })), /3 tokens in · 4 out/);
});

/** The golden journals (tests/fixtures/journals): their bundles hold the server's footer words. */
const FIXTURES = process.env.HERMES_FIXTURES_DIR ?? resolve(__dirname, '../../../tests/fixtures/journals');

test('the footer reads as the server bundle does, for every golden journal with usage', () => {
  let seen = 0;
  for (const name of readdirSync(FIXTURES).filter(n => n.endsWith('.expected.json'))) {
    const expected = JSON.parse(readFileSync(join(FIXTURES, name), 'utf-8'));
    for (const row of expected.transcript.rows as DisplayRow[]) {
      if (row.kind === 'usage') {
        seen += 1;
        const words = usageWords(row);
        assert.ok(expected.bundle['text/markdown'].includes(words), `${name}: ${words}`);
        assert.ok(footer(row).includes(words.replace(/'/g, '&#x27;')), name);
      }
    }
  }
  assert.ok(seen >= 5, `only ${seen} usage rows in ${FIXTURES}`);
});

test('counts of our own say so; thousands are separated as in the bundle', () => {
  const row = usageRow('r', { input_tokens: 1234, output_tokens: 5, our_count: true, duration_s: 2 });
  assert.equal(usageWords(row), '1,234 tokens in · 5 out (our count) · 2.0 s');
});
