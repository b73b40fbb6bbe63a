/**
 * Code shape: no function in the labextension's sources runs over 60 lines (rendering functions
 * included); a longer one is split into child components, hooks or helpers with one job each.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import * as ts from 'typescript';

const MAX_LINES = 60;
/** src/, from .test-build/__tests__ (where this spec runs) or src/__tests__. */
const SRC = path.resolve(__dirname, '..', '..', 'src');
/** Functions still being split by their owner; each entry names why it may stay long for now. */
const WAITING: { [where: string]: string } = {};

function sources(dir: string, out: string[] = []): string[] {
  for (const name of fs.readdirSync(dir)) {
    const full = path.join(dir, name);
    if (fs.statSync(full).isDirectory()) {
      if (name !== '__tests__') {
        sources(full, out);
      }
    } else if (/\.tsx?$/.test(name) && !name.endsWith('.d.ts')) {
      out.push(full);
    }
  }
  return out;
}

/** "file name: N lines" for each function longer than MAX_LINES. */
function longFunctions(file: string): { where: string; lines: number }[] {
  const src = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const found: { where: string; lines: number }[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionDeclaration(node) || ts.isMethodDeclaration(node) || ts.isArrowFunction(node) || ts.isFunctionExpression(node)) {
      const first = src.getLineAndCharacterOfPosition(node.getStart()).line;
      const last = src.getLineAndCharacterOfPosition(node.getEnd()).line;
      if (last - first + 1 > MAX_LINES) {
        const name = 'name' in node && node.name ? node.name.getText() : `(anonymous at line ${first + 1})`;
        found.push({ where: `${path.relative(SRC, file).split(path.sep).join('/')} ${name}`, lines: last - first + 1 });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(src);
  return found;
}

test(`no function in src runs over ${MAX_LINES} lines`, () => {
  const files = sources(SRC);
  assert.ok(files.length > 50, `expected the labextension's sources under ${SRC}`);
  const long = files.flatMap(longFunctions).filter(f => !(f.where in WAITING));
  assert.deepEqual(long.map(f => `${f.where}: ${f.lines} lines`), []);
});
