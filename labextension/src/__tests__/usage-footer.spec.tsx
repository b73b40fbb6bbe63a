/**
 * Usage is never invented: counts a provider did not report read "not reported", never 0.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import React from 'react';
import { renderToStaticMarkup } from 'react-dom/server';

import { IUsageRow } from '../api/rows';
import { UsageFooter } from '../components/cards/notes';
import { usageRow } from '../model/fold-rows';

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
  assert.match(footer(usageRow('r', { input_tokens: 3, output_tokens: 4 })), /3 in · 4 out/);
});
