import assert from 'node:assert/strict';
import { test } from 'node:test';

import { HermesClient } from '../api/client';
import type { IJournalRow, IRunEventsPage } from '../api/contract';

const row = (seq: number): IJournalRow =>
  ({ seq, event: 'token', run_id: 'r', session_id: 's', ts: 0, data: { text: 'x ' } }) as unknown as IJournalRow;

/**
 * A live run's journal that grows by 3 rows between two reads: never an empty page,
 * as on a machine too slow to keep up with the run.
 */
function growingJournal(): { client: HermesClient; pages: () => number } {
  let last = 1200;
  let pages = 0;
  const getRunEvents = async (_: string, after: number, limit: number): Promise<IRunEventsPage> => {
    pages++;
    assert.ok(pages < 50, 'the reader chases the live run');
    const events: IJournalRow[] = [];
    for (let seq = after + 1; seq <= last && events.length < limit; seq++) {
      events.push(row(seq));
    }
    last += 3;
    return { events };
  };
  const client = Object.create(HermesClient.prototype) as HermesClient;
  Object.assign(client, { getRunEvents });
  return { client, pages: () => pages };
}

test('a live view reads what the journal holds and leaves the rest to the stream', async () => {
  const { client, pages } = growingJournal();
  const rows = await client.readAllEvents('r', 0, true);
  assert.equal(pages(), 2, 'one full page, then the short one ends the read');
  assert.deepEqual(rows.map(r => r.seq), Array.from({ length: 1203 }, (_, i) => i + 1));
});

test('a finished run is read to its terminal row, whatever the page sizes', async () => {
  const { client } = growingJournal();
  const terminalAt = 1210;
  const original = (client as unknown as { getRunEvents: HermesClient['getRunEvents'] }).getRunEvents;
  Object.assign(client, {
    getRunEvents: async (id: string, after: number, limit: number) => {
      const page = await original(id, after, limit);
      const events = page.events.filter(r => r.seq <= terminalAt).map(r =>
        r.seq === terminalAt ? ({ ...r, event: 'done', terminal: true }) : r
      );
      return { events };
    }
  });
  const rows = await client.readAllEvents('r', 0);
  assert.equal(rows[rows.length - 1].seq, terminalAt);
  assert.equal(rows.length, terminalAt);
});
