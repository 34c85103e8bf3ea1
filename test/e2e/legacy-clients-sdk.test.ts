// 2025-era clients downstream (issue #10; shared plumbing in legacy-clients-kit.ts): the SDK 1.x client
// and the SDK v2 client in legacy mode speak MCP 2025 (initialize, Mcp-Session-Id, the GET stream, DELETE) to
// the gateway's own endpoints, which serve them from the same modern core; a modern upstream's input_required
// reaches them as real server→client requests on the POST's stream. The SDK v2 client in auto mode still
// picks 2026-07-28.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, test } from 'node:test';
import { Client as Client1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as Transport1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { Client as Client2, StreamableHTTPClientTransport as Transport2 } from '@modelcontextprotocol/client';
import { VERSION, textOf } from './harness.js';
import {
  gatewayForThisFile,
  ELICIT_OK,
  CONFIRMED,
  ROUTES,
  type Session,
  type Seen,
  recordingFetch,
  describeLog,
  assertLegacyTraffic,
  confirmThroughElicitation,
  listAllTools1,
  assertSessionGone,
} from './legacy-clients-kit.js';

const gateway = gatewayForThisFile();

// ---- SDK 1.x ------------------------------------------------------------------------------------------------

describe('SDK 1.x client (2025-11-25) through the gateway', () => {
  async function connect(url: string, asked: any[], log: Seen[]) {
    const client = new Client1({ name: 'sdk1-e2e', version: '1.0.0' }, { capabilities: { elicitation: {} } });
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params);
      return ELICIT_OK;
    });
    const transport = new Transport1(new URL(url), { fetch: recordingFetch(log) });
    await client.connect(transport);
    return { client, transport };
  }

  for (const route of ROUTES) {
    test(`${route.endpoint}: list and call tools, with progress`, { timeout: 60_000 }, async () => {
      const log: Seen[] = [];
      const { client, transport } = await connect(`${gateway.url}${route.endpoint}`, [], log);
      try {
        assert.equal(transport.protocolVersion, '2025-11-25');
        assert.ok(transport.sessionId, 'the transport holds the session id');
        assert.equal(typeof client.getServerVersion()?.name, 'string');
        assert.ok(client.getServerCapabilities()?.tools, 'the gateway announces tools');

        const names = await listAllTools1(client);
        for (const name of [route.echo, route.progress])
          assert.ok(names.includes(name), `${name} in ${names.join(', ')}`);
        if (route.endpoint === '/mcp')
          assert.ok(names.includes('everything__echo') && names.includes(route.confirm), names.join(', '));

        const echoed = await client.callTool({ name: route.echo, arguments: { text: 'héllo, 2025' } });
        assert.deepEqual(echoed.content, [{ type: 'text', text: 'héllo, 2025' }]);
        assert.ok(!('resultType' in echoed), JSON.stringify(echoed));

        const seen: number[] = [];
        const progressed = await client.callTool({ name: route.progress, arguments: { steps: 4 } }, undefined, {
          onprogress: (p) => void seen.push(p.progress),
        });
        assert.deepEqual(seen, [1, 2, 3, 4]);
        assert.deepEqual(progressed.content, [{ type: 'text', text: 'progressed 4' }]);

        if (route.endpoint === '/mcp') {
          // A 2025 client onto a 2025 upstream, through the modern core in between.
          const legacyToLegacy = await client.callTool({ name: 'everything__echo', arguments: { message: 'hi' } });
          assert.deepEqual(legacyToLegacy.content, [{ type: 'text', text: 'Echo: hi' }]);
        }
        assertLegacyTraffic(log, '2025-11-25');
      } finally {
        await client.close();
      }
    });

    test(`${route.endpoint}: elicitation from a modern upstream arrives as elicitation/create`, {
      timeout: 60_000,
    }, async () => {
      const question = await confirmThroughElicitation(
        connect,
        `${gateway.url}${route.elicitEndpoint}`,
        route.confirm,
        'prod',
        '2025-11-25',
      );
      assert.deepEqual(question.requestedSchema?.required, ['ok']);
    });
  }

  test('the GET stream opens, and terminateSession (DELETE) ends the session', { timeout: 60_000 }, async () => {
    const log: Seen[] = [];
    const { client, transport } = await connect(`${gateway.url}/servers/modern/mcp`, [], log);
    let session: Session | undefined;
    try {
      await client.listTools();
      session = {
        url: `${gateway.url}/servers/modern/mcp`,
        id: transport.sessionId!,
        version: transport.protocolVersion!,
      };
      // The SDK opens the GET stream on its own after initialization.
      const deadline = Date.now() + 5_000;
      while (!log.some((s) => s.method === 'GET') && Date.now() < deadline) await sleep(20);
      const get = log.find((s) => s.method === 'GET');
      assert.ok(get, `the SDK opened a GET stream:\n${describeLog(log)}`);
      assert.equal(get.status, 200, describeLog(log));
      assert.equal(get.sessionHeader, session.id);

      await transport.terminateSession();
      const del = log.find((s) => s.method === 'DELETE');
      assert.ok(del, describeLog(log));
      assert.ok(del.status >= 200 && del.status < 300, `DELETE → ${del.status}`);
    } finally {
      await client.close();
    }
    assert.ok(session);
    await assertSessionGone(session, 'after DELETE');
  });
});

// ---- SDK v2, legacy mode ---------------------------------------------------------------------------------

describe('SDK v2 client in legacy mode (2025-06-18) through the gateway', () => {
  async function connect(url: string, asked: any[], log: Seen[]) {
    const client = new Client2(
      { name: 'sdk2-legacy-e2e', version: '1.0.0' },
      {
        capabilities: { elicitation: {} },
        versionNegotiation: { mode: 'legacy' },
        supportedProtocolVersions: ['2025-06-18'],
      },
    );
    client.setRequestHandler('elicitation/create', async (request) => {
      asked.push(request.params);
      return ELICIT_OK;
    });
    const transport = new Transport2(new URL(url), { fetch: recordingFetch(log) });
    await client.connect(transport);
    return { client, transport };
  }

  for (const route of ROUTES) {
    test(`${route.endpoint}: list and call tools, with progress`, { timeout: 60_000 }, async () => {
      const log: Seen[] = [];
      const { client, transport } = await connect(`${gateway.url}${route.endpoint}`, [], log);
      try {
        assert.equal(client.getNegotiatedProtocolVersion(), '2025-06-18');
        assert.equal(client.getProtocolEra(), 'legacy');
        assert.ok(transport.sessionId, 'the transport holds the session id');

        const { tools } = await client.listTools();
        const names = tools.map((t) => t.name);
        for (const name of [route.echo, route.progress])
          assert.ok(names.includes(name), `${name} in ${names.join(', ')}`);

        const echoed = await client.callTool({ name: route.echo, arguments: { text: 'héllo, 2025' } });
        assert.deepEqual(echoed.content, [{ type: 'text', text: 'héllo, 2025' }]);

        const seen: number[] = [];
        const progressed = await client.callTool(
          { name: route.progress, arguments: { steps: 3 } },
          { onprogress: (p) => void seen.push(p.progress) },
        );
        assert.deepEqual(seen, [1, 2, 3]);
        assert.deepEqual(progressed.content, [{ type: 'text', text: 'progressed 3' }]);

        const session = assertLegacyTraffic(log, '2025-06-18');
        for (const s of log.filter((s) => s.rpc !== 'initialize' && s.method === 'POST'))
          assert.equal(s.versionHeader, '2025-06-18', describeLog(log));
        assert.equal(session, transport.sessionId);
      } finally {
        await client.close();
      }
    });

    test(`${route.endpoint}: elicitation from a modern upstream arrives as elicitation/create`, {
      timeout: 60_000,
    }, async () => {
      await confirmThroughElicitation(
        connect,
        `${gateway.url}${route.elicitEndpoint}`,
        route.confirm,
        'staging',
        '2025-06-18',
      );
    });
  }
});

// ---- SDK v2, auto mode -----------------------------------------------------------------------------------

describe('SDK v2 client in auto mode picks the modern era', () => {
  for (const route of ROUTES) {
    test(`${route.endpoint}: 2026-07-28 via server/discover, no initialize, no session`, {
      timeout: 60_000,
    }, async () => {
      const log: Seen[] = [];
      const asked: any[] = [];
      const client = new Client2(
        { name: 'sdk2-auto-e2e', version: '1.0.0' },
        { capabilities: { elicitation: {} }, versionNegotiation: { mode: 'auto' } },
      );
      client.setRequestHandler('elicitation/create', async (request) => {
        asked.push(request.params);
        return ELICIT_OK;
      });
      await client.connect(new Transport2(new URL(`${gateway.url}${route.endpoint}`), { fetch: recordingFetch(log) }));
      try {
        assert.equal(client.getNegotiatedProtocolVersion(), VERSION);
        assert.equal(client.getProtocolEra(), 'modern');

        const { tools } = await client.listTools();
        assert.ok(tools.some((t) => t.name === route.echo));
        const echoed = await client.callTool({ name: route.echo, arguments: { text: 'modern' } });
        assert.deepEqual(echoed.content, [{ type: 'text', text: 'modern' }]);
        if (route.endpoint === '/mcp') {
          const confirmed = await client.callTool({ name: route.confirm, arguments: { env: 'dev' } });
          assert.equal(textOf(confirmed), CONFIRMED);
          assert.equal(asked.length, 1);
        }

        const posts = log.filter((s) => s.method === 'POST');
        assert.equal(posts[0]?.rpc, 'server/discover', describeLog(log));
        assert.ok(!log.some((s) => s.rpc === 'initialize'), `no initialize:\n${describeLog(log)}`);
        assert.ok(
          !log.some((s) => s.sessionAnswered !== null),
          `no Mcp-Session-Id from the gateway:\n${describeLog(log)}`,
        );
        assert.ok(
          !log.some((s) => s.rpc === 'response'),
          `no server→client request on the modern era:\n${describeLog(log)}`,
        );
        for (const s of posts.filter((s) => s.rpc && s.rpc !== 'response' && !s.rpc.startsWith('notifications/'))) {
          assert.equal(s.modernMeta, true, `${s.rpc} carries the modern _meta:\n${describeLog(log)}`);
          assert.equal(s.versionHeader, VERSION);
        }
        if (route.endpoint === '/mcp')
          assert.ok(
            log.some((s) => s.params && 'inputResponses' in s.params),
            `the MRTR retry:\n${describeLog(log)}`,
          );
      } finally {
        await client.close();
      }
    });
  }
});
