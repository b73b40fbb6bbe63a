/**
 * A turn's usage footer in the one wording the server's bundle uses (notebook/outputs.py
 * `usage_words`, from wording.USAGE_WORDS in generated.ts): the cell, the sidebar and the
 * saved bundle read the same, live and settled. Pure.
 */
import { USAGE_JOIN, USAGE_WORDS as W } from '../api/generated';
import { IUsageRow } from '../api/rows';

/** `1,234`: a count with thousands separators, as Python's `f"{n:,}"`. */
function count(n: number): string {
  return n.toLocaleString('en-US', { maximumFractionDigits: 0 });
}

/** `value` to `digits` decimals, halves up: the same arithmetic as notebook/outputs.py `_fixed`. */
function fixed(value: number, digits: number): string {
  const scale = 10 ** digits;
  return (Math.floor(value * scale + 0.5) / scale).toFixed(digits);
}

function fill(template: string, key: string, value: string): string {
  return template.replace(`{${key}}`, value);
}

/** Counts the provider did not report read "not reported", never 0 (docs/transcript.md). */
function tokenParts(row: IUsageRow): string[] {
  if (row.input_tokens === null && row.output_tokens === null) {
    return [W.notReported];
  }
  return [
    row.input_tokens === null ? W.inNotReported : fill(W.tokensIn, 'n', count(row.input_tokens)),
    row.output_tokens === null ? W.outNotReported : fill(W.tokensOut, 'n', count(row.output_tokens))
  ];
}

/** `gpt-4o · 1,234 tokens in · 56 out · 3.2 s · $0.0123` (model when known). */
export function usageWords(row: IUsageRow): string {
  const parts = row.model ? [row.model] : [];
  const tokens = tokenParts(row);
  if (row.our_count && (row.input_tokens !== null || row.output_tokens !== null)) {
    tokens[tokens.length - 1] += ` ${W.ourCount}`;
  }
  parts.push(...tokens);
  if (row.cached_tokens) {
    parts.push(fill(W.cached, 'n', count(row.cached_tokens)));
  }
  if (row.duration_s !== null) {
    parts.push(fill(W.duration, 's', fixed(row.duration_s, 1)));
  }
  if (row.cost_usd !== null) {
    parts.push(fill(W.cost, 'usd', fixed(row.cost_usd, 4)));
  }
  return parts.join(USAGE_JOIN);
}
