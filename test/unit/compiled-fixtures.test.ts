// The TypeScript fixtures as JavaScript (test/compiled-fixtures.ts): what the e2e tests start instead of
// `node --import <loader> test/fixtures/<name>.ts`, so each must run under a bare `node` and import its siblings.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { test } from 'node:test';
import { compiledFixture } from '../compiled-fixtures.js';

test('a compiled fixture runs under plain node, with no loader', () => {
  const file = compiledFixture('modern-server');
  assert.equal(path.extname(file), '.js');
  // FIXTURE_NO_STDIO: it builds its server (the SDK, zod, every tool) and exits without serving stdin.
  const run = spawnSync(process.execPath, [file], {
    env: { ...process.env, FIXTURE_NO_STDIO: '1' },
    encoding: 'utf8',
    input: '',
  });
  assert.equal(run.status, 0, run.stderr);
});

test("a fixture that imports a sibling ('./legacy-server.js') finds its compiled twin", () => {
  // strict-legacy-server checks the first message, then imports legacy-server, which answers it.
  const initialize = {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'test', version: '1' } },
  };
  const run = spawnSync(process.execPath, [compiledFixture('strict-legacy-server')], {
    input: `${JSON.stringify(initialize)}\n`,
    encoding: 'utf8',
    timeout: 60_000,
  });
  const answer = run.stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line))
    .find((message) => message.id === 1);
  assert.ok(answer?.result?.serverInfo, `no initialize result; stderr:\n${run.stderr}`);
});

test('a fixture that does not exist is named', () => {
  assert.throws(() => compiledFixture('no-such-server'), /test\/fixtures\/no-such-server\.ts does not exist/);
});
