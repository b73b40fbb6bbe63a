/**
 * `@` in the composer: find the `@query` at the caret, rank what it may name (the kernel's variables,
 * the notebook's cells, the files beside it) and say what a pick does to the text. Pure, so the
 * specs test it without a browser; the list and its keys are components/composer/mentions.tsx
 * (docs/attachments.md, "@ in the composer").
 */
import type { IAttachment } from '../api/contract';

export type MentionKind = 'variable' | 'cell' | 'file';

/** One thing `@` can name; `key` is what the source needs to build its attachment. */
export interface IMention {
  kind: MentionKind;
  /** Variable name, cell id, or the file's server path. */
  key: string;
  /** The notebook a variable or cell belongs to. */
  notebook?: string;
  /** What the list shows first: "df", "#2", "data.csv". */
  label: string;
  /** What the list shows beside it: a type and size, a cell's first line. */
  detail?: string;
  /** The word left in the text in place of `@query`. */
  word: string;
  /** Extra strings a query may match (a cell's first line, "In [3]"). */
  also?: string[];
}

/** Where the candidates come from and how a pick becomes an attachment (the plugin provides it). */
export interface IMentionSource {
  /** Everything `@` can name now: kinds that cannot be read (no notebook, no kernel) are left out. */
  mentions(): Promise<IMention[]>;
  /** The same attachment the Attach buttons build for this item (null: nothing to attach). */
  attach(mention: IMention): Promise<IAttachment | null>;
}

/** The `@query` the caret is in: `start` is the `@`'s index, `query` what follows it up to the caret. */
export interface IMentionQuery {
  start: number;
  end: number;
  query: string;
}

/** Characters that end a query (anything else, including `.`, `/`, `#`, belongs to a name or path). */
const STOP = /[\s@,;:!?()[\]{}"'`<>]/;

/**
 * The `@query` at the caret, or null. The `@` opens a mention at the start of the text or after a
 * space or an opening bracket only, so an e-mail address or a decorator's `x@y` does not.
 */
export function findMentionQuery(text: string, caret: number): IMentionQuery | null {
  let at = caret - 1;
  while (at >= 0 && text[at] !== '@' && !STOP.test(text[at])) {
    at--;
  }
  if (at < 0 || text[at] !== '@') {
    return null;
  }
  const before = at > 0 ? text[at - 1] : '';
  if (before && !/[\s([{]/.test(before)) {
    return null;
  }
  let end = caret;
  while (end < text.length && !STOP.test(text[end])) {
    end++;
  }
  return { start: at, end, query: text.slice(at + 1, caret) };
}

const KIND_ORDER: { [kind in MentionKind]: number } = { variable: 0, cell: 1, file: 2 };
/** Rows the list shows at most (the rest are reached by typing more). */
export const MAX_SHOWN = 30;

/**
 * How well a query names an item: its label starting with it (0), a word of the label doing so (1), the
 * label containing it (2); the same on the extra strings (a cell's first line) ranks behind (3, 4, 5).
 */
function score(mention: IMention, query: string): number | null {
  const wanted = query.toLowerCase();
  if (!wanted) {
    return 0;
  }
  let best: number | null = null;
  [mention.label, ...(mention.also ?? [])].forEach((text, i) => {
    const lower = text.toLowerCase();
    const found = lower.startsWith(wanted)
      ? 0
      : lower.split(/[^a-z0-9]+/).some(word => word && word.startsWith(wanted))
        ? 1
        : lower.includes(wanted)
          ? 2
          : null;
    const ranked = found === null ? null : found + (i === 0 ? 0 : 3);
    if (ranked !== null && (best === null || ranked < best)) {
      best = ranked;
    }
  });
  return best;
}

/** The items a query names, best first: how well it matches, then variables, cells, files, then their order. */
export function rankMentions(all: readonly IMention[], query: string, limit = MAX_SHOWN): IMention[] {
  const scored: { mention: IMention; score: number; index: number }[] = [];
  all.forEach((mention, index) => {
    const s = score(mention, query);
    if (s !== null) {
      scored.push({ mention, score: s, index });
    }
  });
  scored.sort(
    (a, b) =>
      a.score - b.score || KIND_ORDER[a.mention.kind] - KIND_ORDER[b.mention.kind] || a.index - b.index
  );
  return scored.slice(0, limit).map(s => s.mention);
}

/** The text after a pick: `@query` (and the rest of its word) becomes the item's word, the caret after it. */
export function applyMention(
  text: string,
  at: IMentionQuery,
  mention: IMention
): { text: string; caret: number } {
  const after = text.slice(at.end);
  const spaced = after.startsWith(' ') || after.startsWith('\n') ? '' : ' ';
  const inserted = `${mention.word}${spaced}`;
  return { text: text.slice(0, at.start) + inserted + after, caret: at.start + inserted.length };
}

/** The next highlighted row for ↑/↓ (wrapping), or -1 for an empty list. */
export function moveActive(active: number, count: number, step: 1 | -1): number {
  if (count === 0) {
    return -1;
  }
  return active < 0 ? (step > 0 ? 0 : count - 1) : (active + step + count) % count;
}

/** A cell's row: "#3" and its first non-blank line, cut short. */
export function cellMention(
  notebook: string,
  cellId: string,
  index: number,
  source: string,
  label: string
): IMention {
  const first = source.split('\n').find(line => line.trim())?.trim() ?? '';
  const line = first.length > 60 ? `${first.slice(0, 59)}…` : first;
  const position = `#${index + 1}`;
  return {
    kind: 'cell',
    key: cellId,
    notebook,
    label: position,
    detail: line || '(empty cell)',
    word: label === position ? `cell ${position}` : `cell ${label}`,
    also: [String(index + 1), line, label]
  };
}
