// The floor plan, held against the code's own imports: the ground floor (protocol/, infra/) imports none of
// the other top-level folders; bridge/, policy/ and cache/ import only the ground floor and themselves, never
// src/ (the edge, endpoints and wiring above them) nor each other. docs/design.md, "The house", draws it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Which top-level folders each folder may import from (itself always). */
const MAY_IMPORT: Record<string, readonly string[]> = {
  protocol: [],
  infra: ['protocol'],
  bridge: ['protocol', 'infra'],
  policy: ['protocol', 'infra'],
  cache: ['protocol', 'infra'],
};

function sourceFiles(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => path.relative(ROOT, path.join(entry.parentPath, entry.name)));
}

/** Every relative import and re-export of `file`, type-only ones included, as a path from the root. */
export function importsOf(file: string, text: string): string[] {
  const found: string[] = [];
  for (const match of text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)(['"])(\.\.?\/[^'"]+)\1/gm))
    found.push(path.relative(ROOT, path.resolve(ROOT, path.dirname(file), match[2]!)));
  return found;
}

function violations(): string[] {
  const wrong: string[] = [];
  for (const [folder, allowed] of Object.entries(MAY_IMPORT)) {
    for (const file of sourceFiles(folder)) {
      for (const target of importsOf(file, readFileSync(path.join(ROOT, file), 'utf8'))) {
        const top = target.split(path.sep)[0]!;
        if (top !== folder && !allowed.includes(top)) wrong.push(`${file} imports ${target}`);
      }
    }
  }
  return wrong;
}

test('no arrow runs up: the ground floor and the three pillars import only what lies below them', () => {
  assert.deepEqual(violations(), []);
});

/**
 * Inside src/: the wiring (src/gateway/) is the top floor — only src/gateway.ts (which src/cli.ts starts)
 * imports it; the edge reaches neither the wiring nor the config (it is handed what it needs, as narrow
 * types); the rooms the edge stands on read no config, edge or wiring either: each takes its settings as a
 * type of its own, and src/gateway/ hands them the config's sections.
 */
const SRC_ABOVE = ['src/gateway', 'src/gateway.ts', 'src/cli.ts'];
const SRC_MAY_NOT_IMPORT: Record<string, readonly string[]> = {
  'src/edge': [...SRC_ABOVE, 'src/config'],
  ...Object.fromEntries(
    [
      'aggregate',
      'guardrails',
      'layers',
      'legacy-client',
      'mrtr',
      'notify',
      'ops',
      'profiles',
      'search',
      'telemetry',
    ].map((room) => [`src/${room}`, [...SRC_ABOVE, 'src/config', 'src/edge']]),
  ),
};

function srcViolations(): string[] {
  const wrong: string[] = [];
  const under = (target: string, place: string): boolean =>
    target === place.replace(/\.ts$/, '.js') || target.startsWith(place + path.sep);
  for (const [folder, forbidden] of Object.entries(SRC_MAY_NOT_IMPORT)) {
    for (const file of sourceFiles(folder)) {
      for (const target of importsOf(file, readFileSync(path.join(ROOT, file), 'utf8')).map((t) =>
        t.split(path.sep).join('/'),
      )) {
        if (forbidden.some((place) => under(target, place))) wrong.push(`${file} imports ${target}`);
      }
    }
  }
  // And nothing in src/ but the wiring itself and src/gateway.ts imports the wiring.
  for (const file of sourceFiles('src')) {
    const posix = file.split(path.sep).join('/');
    if (posix.startsWith('src/gateway/') || posix === 'src/gateway.ts') continue;
    for (const target of importsOf(file, readFileSync(path.join(ROOT, file), 'utf8')).map((t) =>
      t.split(path.sep).join('/'),
    )) {
      if (under(target, 'src/gateway')) wrong.push(`${file} imports ${target}`);
    }
  }
  return wrong;
}

test('inside src/, no arrow runs up: rooms → edge → wiring, and only the wiring reads the config', () => {
  assert.deepEqual(srcViolations(), []);
});

test('the check sees an upward import, type-only and dynamic ones included', () => {
  assert.deepEqual(importsOf('bridge/x.ts', "import type { A } from '../src/config/config.js';"), [
    path.join('src', 'config', 'config.js'),
  ]);
  assert.deepEqual(importsOf('cache/x.ts', "const m = await import('../policy/guard.js');"), [
    path.join('policy', 'guard.js'),
  ]);
  assert.deepEqual(importsOf('protocol/x.ts', "export { B } from '../infra/log.js';"), [path.join('infra', 'log.js')]);
  assert.deepEqual(importsOf('protocol/x.ts', "import './side-effect.js';"), [path.join('protocol', 'side-effect.js')]);
});
