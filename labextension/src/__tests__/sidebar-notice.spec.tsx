/**
 * The sidebar says one thing at a time: with the server down, the list, the chat and a recovered
 * turn would each say something; one notice, the most important, in plain words, is shown. Its
 * words do not contradict the buttons under them, and an empty "Allowed always" says how a
 * command gets there.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import React from 'react';
import { renderToStaticMarkup } from 'react-dom/server';

import { HermesApiError } from '../api/client';
import { plainError } from '../api/plain-errors';
import { AllowedAlwaysList, NOTHING_ALLOWED_ALWAYS } from '../components/sidebar/allowed-always';
import { Notice } from '../components/sidebar/notice';
import { OFFLINE_TEXT, RECOVERED_TEXT, pickNotice } from '../model/notice';

const down = plainError(new HermesApiError('Cannot reach the Jupyter server: Failed to fetch', 0));
const refused = plainError(new HermesApiError('message too large', 413));
const broken = plainError(new HermesApiError('boom', 500));
const noop = () => undefined;
const html = (element: JSX.Element) => renderToStaticMarkup(element);

test('with the server down, the list, the chat and a recovered turn make one notice: the server cannot be reached', () => {
  const notice = pickNotice({ sessions: down, chat: down, recovered: true });
  assert.equal(notice?.kind, 'offline');
  assert.equal(notice?.text, OFFLINE_TEXT);
  assert.equal(notice?.dismiss, null, 'it clears itself once the server answers');
  assert.equal(pickNotice({ sessions: down, chat: null, recovered: false })?.kind, 'offline');
  assert.equal(pickNotice({ sessions: broken, chat: down, recovered: false })?.kind, 'offline');
  const out = html(<Notice notice={notice} onDismiss={noop} />);
  assert.equal(out.match(/role="alert"/g)?.length, 1);
  assert.match(out, /data-testid="hermes-offline"/);
  assert.doesNotMatch(out, /HTTP|Failed to fetch[^<]*<\/span>/, 'the technical reason stays in the details fold');
  assert.match(out, /<details[^>]*><summary>Details<\/summary>Cannot reach the Jupyter server: Failed to fetch<\/details>/);
});

test('otherwise what the person just did comes first, then the list, then the recovery note', () => {
  assert.deepEqual(pickNotice({ sessions: broken, chat: refused, recovered: true }), {
    kind: 'error', text: refused.text, details: refused.details, dismiss: 'error'
  });
  assert.equal(pickNotice({ sessions: broken, chat: null, recovered: true })?.kind, 'sessions');
  assert.equal(pickNotice({ sessions: null, chat: null, recovered: true })?.kind, 'recovered');
  assert.equal(pickNotice({ sessions: null, chat: null, recovered: false }), null);
  assert.equal(html(<Notice notice={null} onDismiss={noop} />), '');
  const error = html(<Notice notice={pickNotice({ sessions: null, chat: refused, recovered: false })} onDismiss={noop} />);
  assert.match(error, /data-testid="hermes-error"[^]*too large to send[^]*HTTP 413[^]*title="Dismiss"/);
});

test('the recovery note does not say the turn could not go on: Continue under it does just that', () => {
  assert.doesNotMatch(RECOVERED_TEXT, /(could|did) not continue|cannot continue/i);
  const out = html(<Notice notice={pickNotice({ sessions: null, chat: null, recovered: true })} onDismiss={noop} />);
  assert.match(out, /data-testid="hermes-recovery-banner"[^]*role="status"[^]*recovered from the run journal/);
  assert.match(out, /data-testid="hermes-banner-dismiss"/);
});

test('an empty "Allowed always" says nothing is allowed always and how a command gets there', () => {
  const empty = html(<AllowedAlwaysList items={[]} unavailable={[]} error={null} onRevoke={noop} />);
  assert.match(empty, /data-testid="hermes-allowed-always-empty"/);
  assert.ok(empty.includes(NOTHING_ALLOWED_ALWAYS));
  assert.match(NOTHING_ALLOWED_ALWAYS, /^No commands are allowed always/);
  assert.match(NOTHING_ALLOWED_ALWAYS, /Always allow/);
  const reading = html(<AllowedAlwaysList items={null} unavailable={[]} error={null} onRevoke={noop} />);
  assert.match(reading, /Reading what is allowed always/);
  const listed = html(
    <AllowedAlwaysList items={[{ backend: 'hermes', pattern: 'ls' }]} unavailable={[]} error={null} onRevoke={noop} />
  );
  assert.match(listed, /<code>ls<\/code>[^]*Revoke/);
  assert.doesNotMatch(listed, /No commands are allowed always/);
});
