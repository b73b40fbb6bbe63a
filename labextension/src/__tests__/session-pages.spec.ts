import assert from 'node:assert/strict';
import { test } from 'node:test';

import { readSessionPage } from '../api/client';
import { ISessionSummary } from '../api/contract';
import { SESSION_PAGE_SIZE, SessionPages } from '../model/session-pages';

/** Sessions s0 (newest) … s{n-1}, as a server lists them. */
function listing(n: number): ISessionSummary[] {
  return Array.from({ length: n }, (_, i) => ({ session_id: `s${i}`, updated_at: n - i }));
}

/** A paging server: cursors are the index of the next row; records every request. */
function pagingServer(rows: ISessionSummary[]) {
  const calls: Array<[number, string | null]> = [];
  const request = async (limit: number, before: string | null) => {
    calls.push([limit, before]);
    const start = before === null ? 0 : Number(before);
    const end = Math.min(rows.length, start + limit);
    return { sessions: rows.slice(start, end), next: end < rows.length ? String(end) : null };
  };
  return { calls, request };
}

const ids = (rows: readonly ISessionSummary[]) => rows.map(s => s.session_id);

test('both answer shapes of GET sessions read as a page', () => {
  assert.deepEqual(readSessionPage([{ session_id: 'a' }]), { sessions: [{ session_id: 'a' }], next: null });
  assert.deepEqual(readSessionPage({ sessions: [{ session_id: 'a' }], next: 'c1' }), {
    sessions: [{ session_id: 'a' }],
    next: 'c1'
  });
  assert.deepEqual(readSessionPage({ sessions: [], next: null }), { sessions: [], next: null });
  assert.deepEqual(readSessionPage(null), { sessions: [], next: null });
});

test('the first page asks for 50 and older pages follow the cursor to the end', async () => {
  const server = pagingServer(listing(120));
  const pages = new SessionPages(server.request);
  assert.equal(ids(await pages.loadFirst()).length, SESSION_PAGE_SIZE);
  assert.equal(pages.hasOlder, true);
  await pages.loadOlder();
  assert.equal(pages.hasOlder, true);
  const all = await pages.loadOlder();
  assert.deepEqual(ids(all), ids(listing(120)));
  assert.equal(pages.hasOlder, false);
  assert.deepEqual(server.calls, [[50, null], [50, '50'], [50, '100']]);
  await pages.loadOlder(); // nothing left: no request
  assert.equal(server.calls.length, 3);
});

test('a server without pages answers the whole list, which has no older page', async () => {
  const calls: Array<[number, string | null]> = [];
  const pages = new SessionPages(async (limit, before) => {
    calls.push([limit, before]);
    return listing(80); // ignores limit, like an older server
  });
  assert.equal((await pages.loadFirst()).length, 80);
  assert.equal(pages.hasOlder, false);
  await pages.loadOlder();
  assert.deepEqual(calls, [[50, null]]);
});

test('refreshing the first page keeps older pages and lets a moved-up session appear once', async () => {
  const rows = listing(60);
  const server = pagingServer(rows);
  const pages = new SessionPages(server.request);
  await pages.loadFirst();
  await pages.loadOlder();
  // s55 (on the older page) is updated and moves to the top of the first page.
  const moved = { ...rows[55], updated_at: 100 };
  rows.splice(55, 1);
  rows.unshift(moved);
  const after = ids(await pages.loadFirst());
  assert.equal(after.length, 60);
  assert.equal(after.filter(id => id === 's55').length, 1);
  assert.equal(pages.sessions[0].updated_at, 100);
  assert.equal(pages.hasOlder, false); // the cursor of the older page read is kept
});

test('created, renamed and deleted sessions change whichever page holds them', async () => {
  const pages = new SessionPages(pagingServer(listing(60)).request);
  await pages.loadFirst();
  await pages.loadOlder();
  pages.add({ session_id: 'new' });
  pages.patch('s59', { title: 'Renamed' });
  pages.forget('s0');
  pages.forget('s58');
  const rows = pages.sessions;
  assert.equal(rows[0].session_id, 'new');
  assert.equal(rows.find(s => s.session_id === 's59')?.title, 'Renamed');
  assert.deepEqual(
    ids(rows).filter(id => id === 's0' || id === 's58'),
    []
  );
  assert.equal(rows.length, 59);
});

test('a second click while a page is read does not read it twice', async () => {
  const server = pagingServer(listing(120));
  const pages = new SessionPages(server.request);
  await pages.loadFirst();
  const first = pages.loadOlder();
  assert.equal(pages.loadingOlder, true);
  await pages.loadOlder();
  await first;
  assert.deepEqual(server.calls, [[50, null], [50, '50']]);
  assert.equal(pages.loadingOlder, false);
});
