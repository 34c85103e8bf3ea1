// Messages that send a user to the documentation must name a file that exists: the README no longer holds
// the config reference (issue 17), so the unknown-key message points at docs/configuration.md.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseConfig } from '../../src/config/config.js';
import { BASE, configError } from '../config-problems.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

test('an unknown key points at docs/configuration.md, which exists', () => {
  const { message } = configError(() =>
    parseConfig({ servers: { a: { command: 'node', timeoutMS: 1000 } } }, 't', BASE, {}),
  );
  assert.match(message, /servers\.a: unknown key 'timeoutMS'; check the spelling against docs\/configuration\.md/);
  assert.ok(existsSync(path.join(ROOT, 'docs/configuration.md')));
});

test('every docs/<file>.md that the source names exists', () => {
  const named = new Set<string>();
  const walk = (dir: string): void => {
    for (const entry of readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
      const relative = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(relative);
      else if (entry.name.endsWith('.ts')) {
        for (const match of readFileSync(path.join(ROOT, relative), 'utf8').matchAll(/docs\/([\w-]+\.md)/g))
          named.add(match[1]!);
      }
    }
  };
  for (const dir of ['src', 'bridge', 'policy', 'cache']) walk(dir);
  assert.ok(named.has('configuration.md'));
  for (const file of named)
    assert.ok(existsSync(path.join(ROOT, 'docs', file)), `docs/${file} is named in the source but missing`);
});
