// Start-up and crash messages (issue 36): a child that fails is described by the stderr line that says why
// ("Cannot find module …"), not by Node's version banner it prints last; a command that does not exist is
// reported as such, not first "guessed" to be a 2025 server.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { parseConfig } from '../../src/config/config.js';
import { startGateway, type RunningGateway } from '../../src/gateway.js';
import { meaningfulStderrLine } from '../../bridge/stdio/stderr-line.js';
import { ROOT, until } from './harness.js';
import { writtenLog } from '../recording-log.js';

const written = writtenLog('debug');
let gateway: RunningGateway;
before(async () => {
  const config = parseConfig(
    {
      listen: { port: 0 },
      servers: {
        missing: { command: process.execPath, args: ['./no-such-module-mcp-gw.js'], required: false, timeoutMs: 5_000 },
        nonexistent: { command: 'no-such-command-mcp-gw', required: false, timeoutMs: 5_000 },
      },
    },
    'test',
    ROOT,
  );
  gateway = await startGateway(config, written.logger);
});
after(() => gateway?.close());

test("a child that cannot find its module is described by Node's error line, not its version banner", async () => {
  const upstream = gateway.upstreams.get('missing')!;
  assert.ok(await until(() => upstream.status().lastError !== undefined, 15_000), JSON.stringify(upstream.status()));
  const error = upstream.status().lastError!;
  assert.match(error, /Cannot find module/);
  assert.doesNotMatch(error, /Node\.js v\d/);
});

test('a command that does not exist is not guessed to be a 2025 server', async () => {
  const upstream = gateway.upstreams.get('nonexistent')!;
  assert.ok(await until(() => upstream.status().lastError !== undefined, 15_000), JSON.stringify(upstream.status()));
  assert.match(upstream.status().lastError!, /no-such-command-mcp-gw/);
  const guesses = written
    .records()
    .filter((line) => line.server === 'nonexistent' && typeof line.msg === 'string' && /revision/.test(line.msg));
  assert.deepEqual(guesses, [], 'no era is logged for a command that never ran');
});

test('the meaningful line: causes over noise, the last line when nothing reads like a cause', () => {
  const node = [
    'node:internal/modules/cjs/loader:1228',
    '  throw err;',
    '  ^',
    '',
    "Error: Cannot find module '/srv/server.js'",
    '    at Module._resolveFilename (node:internal/modules/cjs/loader:1225:15)',
    '{',
    "  code: 'MODULE_NOT_FOUND',",
    '  requireStack: []',
    '}',
    '',
    'Node.js v20.20.2',
  ].join('\n');
  assert.equal(meaningfulStderrLine(node), "Error: Cannot find module '/srv/server.js'");
  assert.equal(
    meaningfulStderrLine(
      'Traceback (most recent call last):\n  File "x.py", line 1\nModuleNotFoundError: No module named mcp',
    ),
    'ModuleNotFoundError: No module named mcp',
  );
  assert.equal(meaningfulStderrLine('starting\nlistening on stdio'), 'listening on stdio');
  assert.equal(meaningfulStderrLine(''), undefined);
});
