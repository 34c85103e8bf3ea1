// Spawn failures that node:child_process throws instead of reporting (ENOTDIR for a cwd that is a file):
// the server ends unhealthy with an error naming the setting, the gateway and its other servers carry on.
// (Before the fix, the throw escaped supervision as an unhandled rejection and the gateway exited.)
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { RunningGateway } from '../../src/gateway.js';
import { fixture, post, request, ROOT, startTestGateway, until } from './harness.js';

describe('a stdio server whose cwd is a file', () => {
  let gateway: RunningGateway;
  const file = path.join(ROOT, 'package.json');
  before(async () => {
    gateway = await startTestGateway({
      misplaced: { command: process.execPath, args: ['-e', ''], cwd: file, timeoutMs: 10_000 },
      modern: fixture('modern-server'),
    });
  });
  after(() => gateway?.close());

  test(
    'is unhealthy, saying the working folder is not a folder and naming cwd; ' + 'the gateway keeps serving',
    async () => {
      assert.ok(
        await until(() => gateway.upstreams.get('misplaced')!.status().state === 'unhealthy', 15_000),
        JSON.stringify(gateway.upstreams.get('misplaced')!.status()),
      );
      const answer = await post(`${gateway.url}/servers/misplaced/mcp`, request('tools/list'));
      assert.equal(answer.body.error.code, -32603);
      assert.match(
        answer.body.error.message,
        new RegExp(`working folder is not a folder: ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(check cwd\\)`),
      );
      const listed = await post(`${gateway.url}/servers/modern/mcp`, request('tools/list'));
      assert.ok(Array.isArray(listed.body.result?.tools), JSON.stringify(listed.body));
    },
  );
});
