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
 * type of its own, and src/gateway/ hands them the config's sections. The Tasks steps (src/tasks/) are asked
 * by the edge and never call back into it; the credentials (src/credentials/) lie below the layers, which
 * ask them, so they know no stack either.
 */
const SRC_ABOVE = ['src/gateway', 'src/gateway.ts', 'src/cli.ts'];
const ROOM_NEVER = [...SRC_ABOVE, 'src/config', 'src/edge'];
const SRC_MAY_NOT_IMPORT: Record<string, readonly string[]> = {
  'src/edge': [...SRC_ABOVE, 'src/config'],
  'src/tasks': ROOM_NEVER,
  'src/credentials': [...ROOM_NEVER, 'src/layers'],
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
    ].map((room) => [`src/${room}`, ROOM_NEVER]),
  ),
};

/**
 * The folders of src/ that sit above the rooms (the wiring and the config it reads) and so have no rule of
 * their own here; every other folder of src/ must be named in SRC_MAY_NOT_IMPORT.
 */
const SRC_TOP = ['src/gateway', 'src/config'];

/** bridge/'s parts, each one kind of upstream or what they share; all held to bridge/'s rule above. */
const BRIDGE_PARTS = ['http', 'legacy', 'openapi', 'pool', 'sandbox', 'sse', 'stdio'];

function foldersOf(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name);
}

const under = (target: string, place: string): boolean =>
  target === place.replace(/\.ts$/, '.js') || target.startsWith(`${place}/`);

/** The imports of one file of src/ (given its text) that its room's rule forbids, the wiring's included. */
function srcForbidden(file: string, text: string): string[] {
  const posix = file.split(path.sep).join('/');
  const rule = Object.entries(SRC_MAY_NOT_IMPORT).find(([folder]) => posix.startsWith(`${folder}/`));
  const mayImportWiring = posix.startsWith('src/gateway/') || posix === 'src/gateway.ts';
  return importsOf(file, text)
    .map((target) => target.split(path.sep).join('/'))
    .filter(
      (target) => rule?.[1].some((place) => under(target, place)) || (!mayImportWiring && under(target, 'src/gateway')),
    )
    .map((target) => `${posix} imports ${target}`);
}

function srcViolations(): string[] {
  // Every file of src/: a room's own rule, and nothing but the wiring itself and src/gateway.ts imports the wiring.
  return sourceFiles('src').flatMap((file) => srcForbidden(file, readFileSync(path.join(ROOT, file), 'utf8')));
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

test('every folder is named by a rule: a new room of src/ or part of bridge/ must say where it stands', () => {
  const named = new Set([...Object.keys(SRC_MAY_NOT_IMPORT), ...SRC_TOP]);
  assert.deepEqual(
    foldersOf('src')
      .map((room) => `src/${room}`)
      .filter((room) => !named.has(room)),
    [],
  );
  assert.deepEqual(
    foldersOf('bridge').filter((part) => !BRIDGE_PARTS.includes(part)),
    [],
  );
});

test('the tasks never import the edge, and the credentials never import the config, wiring, layers or edge', () => {
  // The rules themselves, so that a later edit cannot drop them while the imports happen to comply.
  for (const place of ['src/edge', 'src/config', 'src/gateway'])
    assert.ok(SRC_MAY_NOT_IMPORT['src/tasks']!.includes(place), `src/tasks may not import ${place}`);
  for (const place of ['src/edge', 'src/config', 'src/gateway', 'src/layers'])
    assert.ok(SRC_MAY_NOT_IMPORT['src/credentials']!.includes(place), `src/credentials may not import ${place}`);
  for (const room of ['src/guardrails', 'src/layers', 'src/mrtr'])
    assert.ok(SRC_MAY_NOT_IMPORT[room]!.includes('src/edge'), `${room} may not import the edge`);
});

test('the check fails an upward import out of the tasks or the credentials, type-only ones included', () => {
  assert.deepEqual(srcForbidden('src/tasks/x.ts', "import type { McpCall } from '../edge/call.js';"), [
    'src/tasks/x.ts imports src/edge/call.js',
  ]);
  assert.deepEqual(
    srcForbidden('src/credentials/oauth/x.ts', "import { A } from '../../layers/upstream-wrapper.js';"),
    ['src/credentials/oauth/x.ts imports src/layers/upstream-wrapper.js'],
  );
  assert.deepEqual(srcForbidden('src/credentials/x.ts', "const c = await import('../config/config.js');"), [
    'src/credentials/x.ts imports src/config/config.js',
  ]);
  assert.deepEqual(srcForbidden('src/credentials/x.ts', "import type { B } from '../gateway/build.js';"), [
    'src/credentials/x.ts imports src/gateway/build.js',
  ]);
  // Downward arrows pass: the edge asks the tasks, the layers ask the credentials.
  assert.deepEqual(srcForbidden('src/edge/x.ts', "import { openTask } from '../tasks/task-step.js';"), []);
  assert.deepEqual(
    srcForbidden('src/layers/x.ts', "import type { C } from '../credentials/credential-source.js';"),
    [],
  );
});
