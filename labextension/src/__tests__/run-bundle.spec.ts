import assert from 'node:assert/strict';
import { test } from 'node:test';

import { RUN_MIME_TYPE } from '../api/contract';
import { buildRunBundle, isUnfinishedRun, readRunPayload } from '../model/run-bundle';
import { foldEvents, settleWithoutTerminal } from '../model/transcript';
import { journal } from './rows';

test('the final bundle carries run+json with the final status, markdown and plain text', () => {
  const transcript = foldEvents(
    journal('run1', [
      ['token', { text: 'Hello' }],
      ['tool', { tid: 't', name: 'ls' }],
      ['tool_complete', { tid: 't', name: 'ls', preview: 'a' }],
      ['token', { text: 'world' }],
      ['done', {}]
    ]),
    'run1'
  );
  const bundle = buildRunBundle(
    { run_id: 'run1', session_id: 's', seq: 2, status: 'completed' },
    transcript
  );
  assert.deepEqual(bundle[RUN_MIME_TYPE], {
    run_id: 'run1',
    session_id: 's',
    seq: 5,
    status: 'completed'
  });
  assert.match(bundle['text/markdown'] as string, /^Hello\n\n> .*`ls`.*done\n\nworld$/);
  assert.equal(isUnfinishedRun(bundle), false);
});

test('a running output is unfinished; malformed payloads are ignored', () => {
  assert.equal(
    isUnfinishedRun({ [RUN_MIME_TYPE]: { run_id: 'r', session_id: 's', seq: 1, status: 'running' } }),
    true
  );
  assert.equal(readRunPayload({ [RUN_MIME_TYPE]: { status: 'running' } }), null);
  assert.equal(readRunPayload({ 'text/plain': 'x' }), null);
});

test('a run settled without a terminal row gets an interrupted marker', () => {
  const transcript = settleWithoutTerminal(
    foldEvents(journal('r', [['token', { text: 'partial' }]]), 'r'),
    'interrupted',
    { cause: 'kernel_restart' }
  );
  const bundle = buildRunBundle(
    { run_id: 'r', session_id: 's', seq: 1, status: 'interrupted' },
    transcript
  );
  const markdown = bundle['text/markdown'] as string;
  assert.match(markdown, /^partial\n\n\*\*Response interrupted\.\*\*/);
  assert.match(markdown, /kernel/);
  assert.doesNotMatch(markdown, /WebUI process restarted|preserved as a draft/);
});
