/**
 * A line diff of two sources (longest common subsequence), for previewing a
 * proposed replacement. Sources are short (a cell), so the quadratic table is fine;
 * past `MAX_LINES` lines on either side it shows all old lines removed, all new added.
 */
export type DiffOp = 'same' | 'add' | 'remove';

export interface IDiffLine {
  op: DiffOp;
  text: string;
}

const MAX_LINES = 400;

export function lineDiff(before: string, after: string): IDiffLine[] {
  const a = before.split('\n');
  const b = after.split('\n');
  if (a.length > MAX_LINES || b.length > MAX_LINES) {
    return [...a.map(text => ({ op: 'remove' as const, text })), ...b.map(text => ({ op: 'add' as const, text }))];
  }
  // lcs[i][j]: length of the common subsequence of a[i..] and b[j..]
  const lcs = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      lcs[i][j] = a[i] === b[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
    }
  }
  const out: IDiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      out.push({ op: 'same', text: a[i] });
      i++;
      j++;
    } else if (lcs[i + 1][j] >= lcs[i][j + 1]) {
      out.push({ op: 'remove', text: a[i++] });
    } else {
      out.push({ op: 'add', text: b[j++] });
    }
  }
  a.slice(i).forEach(text => out.push({ op: 'remove', text }));
  b.slice(j).forEach(text => out.push({ op: 'add', text }));
  return out;
}
