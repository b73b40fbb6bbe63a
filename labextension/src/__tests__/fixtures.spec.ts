/**
 * Golden-fixture parity: every journal in tests/fixtures/journals, replayed
 * through the live fold, yields exactly the rows the server's fold wrote as
 * "live"; the settled message built from "transcript" then yields its rows.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { test } from 'node:test';

import { LiveTranscript } from '../model/transcript';
import { journalRows, settledOf } from './rows';

/** The repository's fixtures (HERMES_FIXTURES_DIR overrides, e.g. while they are being made). */
const DIR = process.env.HERMES_FIXTURES_DIR ?? resolve(__dirname, '../../../tests/fixtures/journals');

const scenarios = (existsSync(DIR) ? readdirSync(DIR) : [])
  .filter(name => name.endsWith('.jsonl'))
  .map(name => name.slice(0, -'.jsonl'.length))
  .sort();

test('the fixture directory holds journal scenarios', () => {
  assert.ok(scenarios.length >= 2, `no fixtures in ${DIR}`);
});

for (const name of scenarios) {
  test(`fixture ${name}: the live fold matches the server's rows, live and settled`, () => {
    const expected = JSON.parse(readFileSync(join(DIR, `${name}.expected.json`), 'utf-8'));
    const rows = journalRows(readFileSync(join(DIR, `${name}.jsonl`), 'utf-8'));
    const fold = new LiveTranscript(expected.transcript.run_id);
    rows.forEach(row => fold.apply(row));
    assert.deepEqual(fold.rows, expected.live);
    fold.settle(settledOf(expected));
    assert.deepEqual(fold.rows, expected.transcript.rows);
    assert.equal(fold.status, expected.transcript.status);
  });
}
