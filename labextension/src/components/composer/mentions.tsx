/**
 * `@` in the composer: a small list of the kernel's variables, the notebook's cells and the files
 * beside it, filtered by what follows `@`. ↑/↓ move, Enter or Tab picks, Escape closes, a click
 * picks; a pick leaves the item's name in the text and attaches it as the Attach buttons do
 * (docs/attachments.md, "@ in the composer").
 */
import React, { useEffect, useRef, useState } from 'react';

import type { AttachmentsModel } from '../../model/attachments';
import {
  applyMention,
  findMentionQuery,
  IMention,
  IMentionQuery,
  IMentionSource,
  moveActive,
  rankMentions
} from '../../model/mentions';

export const MENTIONS_ID = 'jp-HermesMentions-list';

/** The id of a row, for the composer's aria-activedescendant. */
export function optionId(index: number): string {
  return `${MENTIONS_ID}-${index}`;
}

const KIND_WORD: { [kind in IMention['kind']]: string } = { variable: 'variable', cell: 'cell', file: 'file' };

export interface IMentionListProps {
  loading: boolean;
  rows: IMention[];
  active: number;
  query: string;
  onPick(mention: IMention): void;
  onHover(index: number): void;
}

/**
 * Whether the pointer really moved over the list. A list that opens under a still pointer gets
 * mouse events from the browser too (Chromium sends one after a layout change); those must not
 * take the keyboard's row away, so the first position seen is only remembered.
 */
function usePointerMoves(): { moved(event: { clientX: number; clientY: number }): boolean } {
  const last = useRef<[number, number] | null>(null);
  return {
    moved(event) {
      const before = last.current;
      last.current = [event.clientX, event.clientY];
      return before !== null && (before[0] !== event.clientX || before[1] !== event.clientY);
    }
  };
}

/** The list as it looks for a state: pure, so it renders the same in tests. */
export function MentionList(props: IMentionListProps): JSX.Element {
  const { rows, active } = props;
  const pointer = usePointerMoves();
  const state = props.loading ? 'loading' : rows.length ? 'ready' : 'empty';
  return (
    <div className="jp-HermesMentions" data-testid="hermes-mentions" data-state={state}>
      <ul className="jp-HermesMentions-list" id={MENTIONS_ID} role="listbox" aria-label="Attach with @">
        {rows.map((row, index) => (
          <li
            key={`${row.kind}:${row.key}`}
            id={optionId(index)}
            role="option"
            aria-selected={index === active}
            className="jp-HermesMentions-row"
            data-testid="hermes-mention"
            data-kind={row.kind}
            data-label={row.label}
            // keep the caret in the box: a mousedown would move the focus to the row
            onMouseDown={event => event.preventDefault()}
            onMouseMove={event => pointer.moved(event) && index !== active && props.onHover(index)}
            onClick={() => props.onPick(row)}
          >
            <span className="jp-HermesMentions-kind">{KIND_WORD[row.kind]}</span>
            <span className="jp-HermesMentions-label">{row.label}</span>
            <span className="jp-HermesMentions-detail">{row.detail ?? ''}</span>
          </li>
        ))}
      </ul>
      {state === 'loading' && <div className="jp-HermesMentions-note">Reading variables, cells and files…</div>}
      {state === 'empty' && (
        <div className="jp-HermesMentions-note">
          {props.query ? `Nothing named “${props.query}” to attach.` : 'Nothing to attach here.'}
        </div>
      )}
    </div>
  );
}

export interface IMentions {
  /** The list, when open (render it next to the box). */
  list: JSX.Element | null;
  /** Props for the textarea: the caret's moves and the list's accessibility. */
  inputProps: {
    onSelect: (event: React.SyntheticEvent<HTMLTextAreaElement>) => void;
    'aria-controls'?: string;
    'aria-activedescendant'?: string;
    'aria-autocomplete': 'list';
  };
  /** Handles a key while the list is open; true when it did (the composer does nothing more). */
  onKeyDown(event: React.KeyboardEvent<HTMLTextAreaElement>): boolean;
}

/** The `@query` at the caret, and the one the user closed with Escape (it stays closed until the caret leaves it). */
function useMentionQuery() {
  const [at, setAt] = useState<IMentionQuery | null>(null);
  const [closedAt, setClosedAt] = useState<number | null>(null);

  const track = (element: HTMLTextAreaElement): void => {
    const found = findMentionQuery(element.value, element.selectionStart ?? 0);
    setAt(current =>
      current && found && current.start === found.start && current.end === found.end && current.query === found.query
        ? current
        : found
    );
    if (!found || found.start !== closedAt) {
      setClosedAt(null);
    }
  };
  return { at, setAt, closedAt, setClosedAt, track };
}

/** The candidates, read each time the list opens (a new variable, a new cell); null while reading. */
function useCandidates(open: boolean, source: IMentionSource | null): IMention[] | null {
  const [all, setAll] = useState<IMention[] | null>(null);
  useEffect(() => {
    if (!open || !source) {
      setAll(null);
      return;
    }
    let live = true;
    source.mentions().then(
      found => live && setAll(found),
      () => live && setAll([])
    );
    return () => {
      live = false;
    };
  }, [open, source]);
  return all;
}

/**
 * After a pick, put the caret after the inserted word; then follow the text as well as selection
 * events (a typed character moves the caret too). The order matters: the caret is placed first.
 */
function useCaret(
  input: React.RefObject<HTMLTextAreaElement>,
  text: string,
  track: (element: HTMLTextAreaElement) => void
): React.MutableRefObject<number | null> {
  const caret = useRef<number | null>(null);
  useEffect(() => {
    if (caret.current !== null && input.current) {
      input.current.setSelectionRange(caret.current, caret.current);
      caret.current = null;
    }
  });
  useEffect(() => {
    if (input.current) {
      track(input.current);
    }
  }, [text]);
  return caret;
}

/** A key while the list is open: ↑/↓ move, Enter or Tab picks, Escape closes; true when it was one. */
function listKey(
  event: React.KeyboardEvent<HTMLTextAreaElement>,
  list: { rows: IMention[]; active: number; move: (step: 1 | -1) => void; pick: (m: IMention) => void; close: () => void }
): boolean {
  const key = event.key;
  if (key === 'ArrowDown' || key === 'ArrowUp') {
    list.move(key === 'ArrowDown' ? 1 : -1);
  } else if ((key === 'Enter' || key === 'Tab') && !event.shiftKey && list.rows[list.active]) {
    list.pick(list.rows[list.active]);
  } else if (key === 'Escape') {
    list.close();
  } else {
    return false;
  }
  event.preventDefault();
  event.stopPropagation();
  return true;
}

/**
 * The list's state beside the composer's text: the `@query` at the caret opens it, a pick rewrites the
 * text through `setText` and attaches through the attachments model.
 */
export function useMentions(
  text: string,
  setText: (text: string) => void,
  input: React.RefObject<HTMLTextAreaElement>,
  attachments: AttachmentsModel | undefined
): IMentions {
  const source = attachments?.sources?.mentions ?? null;
  const query = useMentionQuery();
  const { at } = query;
  const open = source !== null && at !== null && query.closedAt !== at.start;
  const all = useCandidates(open, source);
  const [active, setActive] = useState(0);
  const rows = open && all ? rankMentions(all, at.query) : [];

  useEffect(() => setActive(0), [at?.query, all]);
  const caret = useCaret(input, text, query.track);

  const pick = (mention: IMention): void => {
    if (!at || !attachments) {
      return;
    }
    const next = applyMention(text, at, mention);
    caret.current = next.caret;
    setText(next.text);
    query.setAt(null);
    void attachments.attachMention(mention);
  };

  const onKeyDown = (event: React.KeyboardEvent<HTMLTextAreaElement>): boolean =>
    open && at
      ? listKey(event, {
          rows,
          active,
          move: step => setActive(current => moveActive(current, rows.length, step)),
          pick,
          close: () => query.setClosedAt(at.start)
        })
      : false;

  const shownActive = rows.length ? Math.min(active, rows.length - 1) : -1;
  return {
    list: open ? (
      <MentionList
        loading={all === null}
        rows={rows}
        active={shownActive}
        query={at.query}
        onPick={pick}
        onHover={setActive}
      />
    ) : null,
    inputProps: {
      onSelect: event => query.track(event.currentTarget),
      'aria-controls': open ? MENTIONS_ID : undefined,
      'aria-activedescendant': open && shownActive >= 0 ? optionId(shownActive) : undefined,
      'aria-autocomplete': 'list'
    },
    onKeyDown
  };
}
