// One child shared by many callers, and what happens when it misbehaves: crashes, junk on stdout,
// huge lines, slow answers, cancelled streams, a child that will not start, and shutdown.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { RunningGateway } from '../../src/gateway.js';
import { fixture, headersFor, post, request, ROOT, startTestGateway, until, textOf } from './harness.js';
import { tempDir } from '../temp.js';
import { scaled } from '../timing.js';
import { compiledFixture } from '../compiled-fixtures.js';

const cancelLog = path.join(tempDir('mcp-gw-'), 'cancel.log');

const cancelled = () => (existsSync(cancelLog) ? readFileSync(cancelLog, 'utf8') : '');
const callLog = path.join(path.dirname(cancelLog), 'calls.log');
/** Slow calls that have begun in a child, so a test can act once one is in flight there. */
const slowStarted = () =>
  existsSync(callLog)
    ? readFileSync(callLog, 'utf8')
        .split('\n')
        .filter((l) => l.startsWith('STARTED slow')).length
    : 0;

describe('a shared modern child', () => {
  let gateway: RunningGateway;
  let url: string;
  before(async () => {
    gateway = await startTestGateway({
      // Room for a restart on a loaded machine, and for the 200 calls at once below (the default queue holds 64).
      modern: fixture('modern-server', {
        env: { FIXTURE_CANCEL_LOG: cancelLog, FIXTURE_CALL_LOG: callLog, FIXTURE_BANNER: '1' },
        timeoutMs: 8_000,
        maxQueued: 256,
      }),
      // A timeout longer than the test may run: an answer at all shows the failure did not wait for it.
      small: fixture('modern-server', { maxLineBytes: 4096, timeoutMs: 600_000 }),
    });
    url = `${gateway.url}/servers/modern/mcp`;
  });
  after(() => gateway.close());

  test('200 concurrent calls from 20 clients, each reusing ids 1-10: every answer reaches its caller', async () => {
    const calls: Promise<void>[] = [];
    for (let client = 0; client < 20; client++) {
      for (let id = 1; id <= 10; id++) {
        const text = `client ${client} call ${id} ${'·'.repeat(id)}`;
        calls.push(
          post(url, request('tools/call', { name: 'echo', arguments: { text } }, id)).then((answer) => {
            assert.equal(answer.body.id, id);
            assert.equal(textOf(answer), text);
          }),
        );
      }
    }
    await Promise.all(calls);
  });

  test('a banner, junk lines and a 10 MiB line on stdout: the gateway keeps serving', async () => {
    const noisy = await post(url, request('tools/call', { name: 'noise', arguments: { mib: 10 } }));
    assert.equal(textOf(noisy), 'noisy');
    const after = await post(url, request('tools/call', { name: 'echo', arguments: { text: 'still here' } }));
    assert.equal(textOf(after), 'still here');
  });

  test('an answer over maxLineBytes fails that call at once, naming the setting', { timeout: 60_000 }, async () => {
    const answer = await post(
      `${gateway.url}/servers/small/mcp`,
      request('tools/call', { name: 'echo', arguments: { text: 'y'.repeat(8192) } }),
    );
    assert.equal(answer.body.error.code, -32603);
    assert.match(answer.body.error.message, /servers\.small\.maxLineBytes/);
    const next = await post(
      `${gateway.url}/servers/small/mcp`,
      request('tools/call', { name: 'echo', arguments: { text: 'fits' } }),
    );
    assert.equal(textOf(next), 'fits');
  });

  test('a request over timeoutMs gets -32603 naming the setting, and the child is told to cancel', async () => {
    const answer = await post(url, request('tools/call', { name: 'slow', arguments: { ms: 600_000 } }));
    assert.equal(answer.body.error.code, -32603);
    assert.match(answer.body.error.message, /servers\.modern\.timeoutMs/);
    assert.ok(await until(() => /CANCELLED slow \d+ timeout/.test(cancelled()), 10_000), cancelled());
  });

  test('closing an SSE stream sends notifications/cancelled to the child', async () => {
    const before = cancelled().split('\n').length;
    const body = request('tools/call', { name: 'slow', arguments: { ms: 1400 }, _meta: { progressToken: 1 } });
    const controller = new AbortController();
    const response = await fetch(url, {
      method: 'POST',
      headers: headersFor(body),
      body: JSON.stringify(body),
      signal: controller.signal,
    });
    assert.equal(response.headers.get('content-type'), 'text/event-stream');
    controller.abort();
    assert.ok(await until(() => cancelled().split('\n').length > before, 10_000), 'the child logged a cancellation');
    assert.match(cancelled().split('\n').at(-2)!, /CANCELLED slow \d+ The client closed the request/);
  });

  // The call outlasts timeoutMs, so an error that names the kill (not the timeout) came from the crash.
  test('the child killed mid-call: an error at once naming the server, then the next call succeeds', async () => {
    const pid = Number(textOf(await post(url, request('tools/call', { name: 'pid', arguments: {} }))));
    const begun = slowStarted();
    const inFlight = post(url, request('tools/call', { name: 'slow', arguments: { ms: 60_000 } }));
    assert.ok(await until(() => slowStarted() > begun, 10_000), 'the slow call never reached the child');
    process.kill(pid, 'SIGKILL');
    const answer = await inFlight;
    assert.equal(answer.body.error.code, -32603);
    assert.match(answer.body.error.message, /Upstream 'modern' was killed by SIGKILL while handling tools\/call/);
    const next = await post(url, request('tools/call', { name: 'pid', arguments: {} }));
    assert.notEqual(Number(textOf(next)), pid, 'a new child answered');
    assert.equal(gateway.upstreams.get('modern')!.status().restarts, 1);
  });

  test('a child that exits on a call reports its exit code', async () => {
    const answer = await post(url, request('tools/call', { name: 'crash', arguments: {} }));
    assert.match(answer.body.error.message, /Upstream 'modern' exited with code 3/);
    assert.equal(answer.body.error.data.exitCode, 3);
    const next = await post(url, request('tools/call', { name: 'echo', arguments: { text: 'back' } }));
    assert.equal(textOf(next), 'back');
  });
});

describe('eras', () => {
  let gateway: RunningGateway;
  before(async () => {
    gateway = await startTestGateway({
      legacy: fixture('legacy-server', { env: { FIXTURE_CANCEL_LOG: cancelLog, FIXTURE_CALL_LOG: callLog } }),
      strict: {
        command: process.execPath,
        args: [compiledFixture('strict-legacy-server')],
        cwd: ROOT,
        // The probe must reach the child for it to exit on it: with the 5 s default, a tsx child that took longer
        // to start (a loaded CI machine) read the probe only after it was given up as silence, exited during the
        // initialize that followed, and that exit counted as a crash. A deadline, not an expectation.
        probeTimeoutMs: scaled(30_000),
      },
      pinned: fixture('legacy-server', { era: 'legacy' }),
    });
  });
  after(() => gateway.close());

  for (const server of ['legacy', 'strict', 'pinned']) {
    test(`${server}: served as legacy, results completed for the modern client`, async () => {
      const answer = await post(
        `${gateway.url}/servers/${server}/mcp`,
        request('tools/call', { name: 'echo', arguments: { text: 'old' } }),
      );
      assert.equal(textOf(answer), 'old');
      assert.equal(answer.body.result.resultType, 'complete');
      assert.equal(answer.body.result._meta['io.modelcontextprotocol/serverInfo'].name, 'legacy-fixture');
      const list = await post(`${gateway.url}/servers/${server}/mcp`, request('tools/list'));
      assert.equal(list.body.result.ttlMs, 0);
      assert.equal(list.body.result.cacheScope, 'private');
      assert.equal(gateway.upstreams.get(server)!.status().era, 'legacy');
    });
  }

  test('a server that exits on the probe is restarted without counting as a crash', async () => {
    // On its own, not after the test above: strict exits when probed as a modern server (the fixture does), so
    // being served, as legacy, means it was started again after that exit; and that start is no crash.
    const strict = gateway.upstreams.get('strict')!;
    assert.ok(
      await until(() => strict.status().state === 'ready', 30_000),
      `strict: ${JSON.stringify(strict.status())}`,
    );
    assert.equal(strict.status().era, 'legacy');
    assert.equal(strict.status().restarts, 0, JSON.stringify(strict.status()));
  });

  test(
    "a legacy child's elicitation request, for a client that did not declare elicitation: -32021 naming it, and " +
      'the child goes on',
    async () => {
      const answer = await post(
        `${gateway.url}/servers/legacy/mcp`,
        request('tools/call', { name: 'ask', arguments: {} }),
      );
      assert.equal(answer.status, 400); // the spec fixes -32021's HTTP status (protocol/error-status.ts)
      assert.equal(answer.body.error.code, -32021);
      assert.deepEqual(answer.body.error.data, { requiredCapabilities: { elicitation: {} } });
      const after = await post(
        `${gateway.url}/servers/legacy/mcp`,
        request('tools/call', { name: 'echo', arguments: { text: 'still here' } }),
      );
      assert.match(JSON.stringify(after.body), /still here/);
    },
  );

  test('a legacy child gets notifications/cancelled when the client goes away', async () => {
    const before = cancelled().split('\n').length;
    const body = request('tools/call', { name: 'slow', arguments: { ms: 60_000 } });
    const controller = new AbortController();
    const begun = slowStarted();
    const pending = fetch(`${gateway.url}/servers/legacy/mcp`, {
      method: 'POST',
      headers: headersFor(body),
      body: JSON.stringify(body),
      signal: controller.signal,
    }).catch(() => undefined);
    assert.ok(await until(() => slowStarted() > begun, 10_000), 'the slow call never reached the child');
    controller.abort();
    await pending;
    assert.ok(await until(() => cancelled().split('\n').length > before, 10_000));
  });
});

describe('a child that cannot run', () => {
  let gateway: RunningGateway;
  before(async () => {
    gateway = await startTestGateway({
      missing: { command: 'definitely-not-a-command-mcp', timeoutMs: 10_000 },
      dying: {
        command: process.execPath,
        args: ['-e', 'console.error("boom: missing API key"); process.exit(1)'],
        timeoutMs: 10_000,
      },
    });
  });
  after(() => gateway.close());

  test('a command that does not exist ends unhealthy with an error naming the command and the setting', async () => {
    const answer = await post(`${gateway.url}/servers/missing/mcp`, request('tools/list'));
    assert.equal(answer.body.error.code, -32603);
    assert.match(
      answer.body.error.message,
      new RegExp(
        String.raw`unhealthy.*command not found: definitely-not-a-command-mcp \(check command\)` +
          String.raw`.*check servers\.missing \(command, args, cwd, env\)`,
      ),
    );
  });

  test('a child that keeps exiting is marked unhealthy and its stderr is quoted', async () => {
    const answer = await post(`${gateway.url}/servers/dying/mcp`, request('tools/list'));
    assert.match(answer.body.error.message, /Upstream 'dying' is unhealthy/);
    assert.match(answer.body.error.message, /boom: missing API key/);
    assert.equal(gateway.upstreams.get('dying')!.status().state, 'unhealthy');
  });
});

describe('shutdown', () => {
  test('closes stdin, and kills the process group so no grandchild is left', async () => {
    const gateway = await startTestGateway({
      family: {
        command: 'sh',
        args: ['-c', `sleep 300 & exec ${process.execPath} ${compiledFixture('modern-server')}`],
        cwd: ROOT,
      },
    });
    const pid = Number(
      textOf(await post(`${gateway.url}/servers/family/mcp`, request('tools/call', { name: 'pid', arguments: {} }))),
    );
    const group = () =>
      execFileSync('ps', ['-o', 'pid=', '-g', String(pid)], { encoding: 'utf8' })
        .trim()
        .split(/\s+/)
        .filter(Boolean);
    assert.ok(group().length >= 2, 'the child and its sleeping grandchild share a process group');
    await gateway.close();
    assert.ok(
      await until(() => {
        try {
          return group().length === 0;
        } catch {
          return true;
        }
      }, 3000),
      'no process of the group is left',
    );
  });
});
