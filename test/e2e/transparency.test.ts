// Transparency: putting the gateway in front of a modern server changes nothing a client can observe but
// the rewrites docs/design.md lists. One scenario list (transparency-kit.ts) is asked of each upstream directly
// and through /servers/<name>/mcp and /mcp; status, error code and result bytes must agree, and every
// message the gateway sends must validate against the 2026-07-28 schema.
// On /mcp, errors are the upstream's bytes too, but for the router's own words on a name or URI no upstream
// lists, and server/discover is the gateway's own over the upstream's versions, features, ttlMs and cacheScope.
// Upstreams: the SDK v2 server over HTTP, the same server over stdio, and a raw server with quirks
// (no resultType, JSON lines in an application/json answer, errors at the statuses the spec fixes).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { RunningGateway } from '../../src/gateway.js';
import { startModernHttpServer, type ModernHttpServer } from '../fixtures/http-servers.js';
import { startQuirkyServer, type QuirkyServer } from '../fixtures/quirky-server.js';
import { fixture, startTestGateway } from './harness.js';
import { askHttp, assertSame, requestFor, SCENARIOS, StdioPeer, type Scenario, type Seen } from './transparency-kit.js';
import { compiledFixture } from '../compiled-fixtures.js';

interface Subject {
  /** The server's name in the gateway's config (and its /mcp prefix). */
  server: string;
  /** The scenarios' tool names it does not list: /mcp answers those itself (written down from the fixture). */
  unlisted: readonly string[];
  gateway: RunningGateway;
  direct(scenario: Scenario, body: ReturnType<typeof requestFor>): Promise<Seen>;
}

/** The SDK fixture (test/fixtures/modern-server.ts) has no tool by these names; the quirky one lists all but 'nope'. */
const MODERN_UNLISTED = ['nope', 'needs-elicitation', 'strict-meta'];

/** Runs every scenario directly and through both endpoints of the gateway that serves the subject. */
function transparent(subject: () => Subject): void {
  SCENARIOS.forEach((scenario, index) => {
    test(scenario.name, async () => {
      const { server, unlisted, gateway, direct } = subject();
      const id = index + 1;
      const seen = await direct(scenario, requestFor(scenario, id));
      const perServer = await askHttp(`${gateway.url}/servers/${server}/mcp`, scenario, requestFor(scenario, id));
      assertSame(scenario, seen, perServer, { aggregate: false, server, unlisted });
      const aggregate = await askHttp(`${gateway.url}/mcp`, scenario, requestFor(scenario, id, `${server}__`));
      assertSame(scenario, seen, aggregate, { aggregate: true, server, unlisted });
    });
  });
}

describe('the SDK v2 server over HTTP', () => {
  let upstream: ModernHttpServer;
  let gateway: RunningGateway;
  before(async () => {
    upstream = await startModernHttpServer();
    gateway = await startTestGateway({ sdk: { url: upstream.url } });
  });
  after(async () => {
    await gateway.close();
    await upstream.close();
  });

  transparent(() => ({
    server: 'sdk',
    unlisted: MODERN_UNLISTED,
    gateway,
    direct: (scenario, body) => askHttp(upstream.url, scenario, body),
  }));
});

describe('the SDK v2 server over stdio', () => {
  // A pipe has no status: the same server code over HTTP (its twin) says which status each answer has,
  // and answers the scenarios that are about HTTP headers.
  let twin: ModernHttpServer;
  let peer: StdioPeer;
  let gateway: RunningGateway;
  before(async () => {
    twin = await startModernHttpServer();
    peer = new StdioPeer(compiledFixture('modern-server'));
    gateway = await startTestGateway({ local: fixture('modern-server') });
  });
  after(async () => {
    peer.close();
    await gateway.close();
    await twin.close();
  });

  transparent(() => ({
    server: 'local',
    unlisted: MODERN_UNLISTED,
    gateway,
    async direct(scenario, body) {
      const reference = await askHttp(twin.url, scenario, body);
      if (scenario.httpOnly) return reference;
      return { status: reference.status, messages: await peer.ask(body) };
    },
  }));
});

describe('a raw server with quirks', () => {
  let upstream: QuirkyServer;
  let gateway: RunningGateway;
  before(async () => {
    upstream = await startQuirkyServer();
    gateway = await startTestGateway({ quirky: { url: upstream.url } });
  });
  after(async () => {
    await gateway.close();
    await upstream.close();
  });

  test('the fixture has the quirks the suite is about (so the comparisons below can fail)', async () => {
    const ask = (name: string) => {
      const scenario = SCENARIOS.find((s) => s.name === name)!;
      return askHttp(upstream.url, scenario, requestFor(scenario, 1));
    };
    const call = await ask('a tool call');
    assert.doesNotMatch(call.messages[0]!, /resultType/);
    const progress = await ask('a tool call with progress');
    assert.equal(
      progress.messages.length,
      4,
      'a log line, two progress lines, then the response, in one application/json body',
    );
    assert.deepEqual(
      [(await ask('a tool that needs elicitation')).status, (await ask('a tool with _meta rules of its own')).status],
      [400, 400],
    );
    assert.deepEqual(
      [(await ask('an unknown tool (-32602, 200)')).status, (await ask('a method the server does not serve')).status],
      [200, 404],
    );
  });

  transparent(() => ({
    server: 'quirky',
    unlisted: ['nope'],
    gateway,
    direct: (scenario, body) => askHttp(upstream.url, scenario, body),
  }));

  test(
    'through the gateway, the JSON-lines answer arrives as a stream: ' + 'progress first, the response last',
    async () => {
      const scenario = SCENARIOS.find((s) => s.name === 'a tool call with progress')!;
      const through = await askHttp(`${gateway.url}/servers/quirky/mcp`, scenario, requestFor(scenario, 7));
      // The server's log message is not for a request that set no logLevel (the spec says it must not send it).
      assert.deepEqual(
        through.messages.map((m) => JSON.parse(m).method ?? 'response'),
        ['notifications/progress', 'notifications/progress', 'response'],
      );
      assert.equal(JSON.parse(through.messages[2]!).result.resultType, 'complete');
      const logged: Scenario = {
        ...scenario,
        params: { ...scenario.params, _meta: { ...scenario.params._meta, 'io.modelcontextprotocol/logLevel': 'info' } },
      };
      const withLogs = await askHttp(`${gateway.url}/servers/quirky/mcp`, logged, requestFor(logged, 9));
      assert.deepEqual(
        withLogs.messages.map((m) => JSON.parse(m).method ?? 'response'),
        ['notifications/message', 'notifications/progress', 'notifications/progress', 'response'],
      );
    },
  );

  test('without a progress token, the JSON-lines answer is answered as JSON with its response alone', async () => {
    const scenario: Scenario = {
      name: 'progress, no token',
      method: 'tools/call',
      params: { name: 'progress', arguments: { steps: 2 } },
    };
    const through = await askHttp(`${gateway.url}/servers/quirky/mcp`, scenario, requestFor(scenario, 8));
    assert.equal(through.status, 200);
    assert.equal(through.messages.length, 1);
    assert.equal(JSON.parse(through.messages[0]!).result.content[0].text, 'progressed 2');
  });
});
