/**
 * `@` in the composer: the query at the caret, the ranking, the list's markup and what a pick becomes.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import React from 'react';
import { renderToStaticMarkup } from 'react-dom/server';

import type { IAttachment } from '../api/contract';
import { MentionList, optionId } from '../components/composer/mentions';
import { AttachmentsModel } from '../model/attachments';
import {
  applyMention,
  cellMention,
  findMentionQuery,
  IMention,
  moveActive,
  rankMentions
} from '../model/mentions';

const at = (text: string) => findMentionQuery(text.replace('|', ''), text.indexOf('|'));

test('the @query is found at the caret, at the start or after a space or bracket only', () => {
  assert.deepEqual(at('@d|'), { start: 0, end: 2, query: 'd' });
  assert.deepEqual(at('what is in @df|'), { start: 11, end: 14, query: 'df' });
  assert.deepEqual(at('look at @|'), { start: 8, end: 9, query: '' });
  assert.deepEqual(at('(@data.c|sv)'), { start: 1, end: 10, query: 'data.c' }, 'the rest of the word is replaced too');
  assert.deepEqual(at('@da|ta please'), { start: 0, end: 5, query: 'da' });
  assert.equal(at('mail me@host|'), null, 'an e-mail address is no mention');
  assert.equal(at('@df and then|'), null, 'a space ends the mention');
  assert.equal(at('no at sign|'), null);
  assert.equal(at('a @b\n|'), null, 'a new line ends it');
});

const DF: IMention = { kind: 'variable', key: 'df', notebook: 'a.ipynb', label: 'df', word: 'df', detail: 'pandas.DataFrame · 4 × 2' };
const DATA: IMention = { kind: 'variable', key: 'raw_data', notebook: 'a.ipynb', label: 'raw_data', word: 'raw_data' };
const CELL1 = cellMention('a.ipynb', 'c1', 0, '\nimport pandas as pd\ndf = pd.DataFrame()', 'In [1]');
const CELL2 = cellMention('a.ipynb', 'c2', 1, 'df.describe()', '#2');
const FILE: IMention = { kind: 'file', key: 'work/data.csv', label: 'data.csv', word: 'data.csv', detail: 'file' };
const ALL = [FILE, CELL2, CELL1, DATA, DF];

test('ranking: a name that starts with the query first, then a word in it, then any match, then a cell line; variables before cells before files', () => {
  assert.deepEqual(rankMentions(ALL, 'd').map(m => m.label), ['df', 'data.csv', 'raw_data', '#2', '#1']);
  assert.deepEqual(rankMentions(ALL, '').map(m => m.label), ['raw_data', 'df', '#2', '#1', 'data.csv']);
  assert.deepEqual(rankMentions(ALL, 'DATA').map(m => m.label), ['data.csv', 'raw_data']);
  assert.deepEqual(rankMentions(ALL, '2').map(m => m.label), ['#2'], 'a cell by its number');
  assert.deepEqual(rankMentions(ALL, 'import').map(m => m.label), ['#1'], 'a cell by its first line');
  assert.deepEqual(rankMentions(ALL, 'zzz'), []);
  assert.equal(rankMentions(ALL, '', 2).length, 2);
});

test('a cell row shows its position and first non-blank line; its word is its label', () => {
  assert.equal(CELL1.label, '#1');
  assert.equal(CELL1.detail, 'import pandas as pd');
  assert.equal(CELL1.word, 'cell In [1]');
  assert.equal(CELL2.word, 'cell #2');
  assert.equal(cellMention('a', 'c', 2, '   \n', '#3').detail, '(empty cell)');
  assert.equal(cellMention('a', 'c', 0, 'x'.repeat(100), '#1').detail?.length, 60);
});

test('a pick replaces @query (and the rest of its word) with the word, a space after, the caret past it', () => {
  assert.deepEqual(applyMention('@d', at('@d|')!, DF), { text: 'df ', caret: 3 });
  assert.deepEqual(applyMention('what is in @d please', at('what is in @d| please')!, DF), {
    text: 'what is in df please',
    caret: 13
  });
  assert.deepEqual(applyMention('explain @1', at('explain @1|')!, CELL1), { text: 'explain cell In [1] ', caret: 20 });
});

test('↑/↓ wrap around the list; an empty list has no active row', () => {
  assert.equal(moveActive(0, 3, 1), 1);
  assert.equal(moveActive(2, 3, 1), 0);
  assert.equal(moveActive(0, 3, -1), 2);
  assert.equal(moveActive(-1, 3, -1), 2);
  assert.equal(moveActive(0, 0, 1), -1);
});

const none = () => undefined;

test('the list is a listbox of options with ids for aria-activedescendant; the active one is selected', () => {
  const html = renderToStaticMarkup(
    <MentionList loading={false} rows={[DF, CELL1]} active={1} query="" onPick={none} onHover={none} />
  );
  assert.match(html, /data-state="ready"/);
  assert.match(html, /role="listbox"/);
  assert.match(html, new RegExp(`id="${optionId(0)}" role="option" aria-selected="false"[^>]*data-kind="variable" data-label="df"`));
  assert.match(html, new RegExp(`id="${optionId(1)}" role="option" aria-selected="true"[^>]*data-kind="cell"`));
  assert.match(html, /<span class="jp-HermesMentions-detail">pandas\.DataFrame · 4 × 2<\/span>/);
  const empty = renderToStaticMarkup(
    <MentionList loading={false} rows={[]} active={-1} query="zz" onPick={none} onHover={none} />
  );
  assert.match(empty, /data-state="empty"/);
  assert.match(empty, /Nothing named “zz” to attach\./);
  const loading = renderToStaticMarkup(<MentionList loading rows={[]} active={-1} query="" onPick={none} onHover={none} />);
  assert.match(loading, /data-state="loading"/);
});

test('a pick attaches what the source builds, as the Attach buttons do; a failure says the server sentence', async () => {
  const built: IAttachment = { kind: 'variable', label: 'df', text: 'df: pandas.DataFrame, shape 4 × 2', path: 'a.ipynb' };
  const asked: IMention[] = [];
  const model = new AttachmentsModel();
  model.setSources({
    available: () => [],
    pick: async () => null,
    mentions: {
      mentions: async () => ALL,
      attach: async m => {
        asked.push(m);
        if (m.kind === 'file') {
          throw new Error('The file is not text.');
        }
        return m.kind === 'variable' ? built : null;
      }
    }
  });
  assert.equal(await model.attachMention(DF), true);
  assert.deepEqual(asked, [DF]);
  assert.deepEqual(model.items, [built]);
  assert.equal(await model.attachMention(FILE), false);
  assert.equal(model.problem, 'The file is not text.');
  assert.equal(await model.attachMention(CELL2), false);
  assert.equal(model.problem, '#2 could not be attached.');
  assert.equal(model.items.length, 1);
});
