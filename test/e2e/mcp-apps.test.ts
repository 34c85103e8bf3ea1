// MCP Apps (ui:// resources, a tool's `_meta.ui.resourceUri`) through /mcp: two servers built with
// @modelcontextprotocol/ext-apps' helpers that use the same ui:// URIs. /mcp namespaces each server's ui://
// URIs as it names tools (`ui://<prefix><separator>…`) in tools' `_meta`, in resource and template lists and
// in read answers, and places a read by that namespace, so each tool's UI is readable with the right
// content (a stdio server's, and a Streamable HTTP server's, which gets its own URI in Mcp-Name too);
// /servers/<name>/mcp rewrites nothing; policy judges a ui:// URI as its server names it.
import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { serve } from '@hono/node-server';
import { createMcpHandler } from '@modelcontextprotocol/server';
import { after, before, describe, test } from 'node:test';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { RunningGateway } from '../../src/gateway.js';
import { tempDir } from '../temp.js';
import { eventually, headersFor, openListen, post, request, ROOT, startTestGateway, VERSION } from './harness.js';
import { compiledFixture } from '../compiled-fixtures.js';

const apps = (id: string) => ({
  command: process.execPath,
  args: [compiledFixture('apps-server')],
  cwd: ROOT,
  env: { SERVER_ID: id },
});
const SERVERS = { a: apps('alpha'), b: apps('beta') };
/** a also offers a tool whose UI names b's view as /mcp shows it. */
const WITH_BORROWER = {
  a: { ...apps('alpha'), env: { SERVER_ID: 'alpha', FOREIGN_UI: 'ui://b__dashboard/view.html' } },
  b: apps('beta'),
};
const VIEW = 'ui://dashboard/view.html';

async function connect(url: string): Promise<Client> {
  const client = new Client(
    { name: 'apps-host', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: VERSION } } },
  );
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return client;
}

/** What a host does for a tool with a UI: read the resource its `_meta.ui.resourceUri` names. */
async function readUi(client: Client, resourceUri: string): Promise<{ uri: string; text: string; mimeType?: string }> {
  const { contents } = await client.readResource({ uri: resourceUri });
  assert.equal(contents.length, 1);
  return contents[0] as { uri: string; text: string; mimeType?: string };
}

describe('MCP Apps through /mcp: two servers whose ui:// URIs collide', () => {
  let gateway: RunningGateway;
  let client: Client;
  before(async () => {
    gateway = await startTestGateway(
      WITH_BORROWER,
      {},
      { profiles: { alphaonly: { tools: ['a__show-*'], resources: ['ui://a__*/**'] } } },
    );
    client = await connect(`${gateway.url}/mcp`);
  });
  after(async () => {
    await client?.close();
    await gateway?.close();
  });

  test("each tool's _meta names its own server's UI, in the spec's key and the legacy one", async () => {
    const { tools } = await client.listTools();
    const byName = new Map(tools.map((tool) => [tool.name, tool._meta as Record<string, any>]));
    assert.deepEqual([...byName.keys()].sort(), ['a__borrow', 'a__show-dashboard', 'b__show-dashboard']);
    assert.equal(byName.get('a__show-dashboard')!.ui.resourceUri, 'ui://a__dashboard/view.html');
    assert.equal(byName.get('b__show-dashboard')!.ui.resourceUri, 'ui://b__dashboard/view.html');
    assert.equal(byName.get('a__show-dashboard')!['ui/resourceUri'], 'ui://a__dashboard/view.html');
    assert.equal(byName.get('b__show-dashboard')!['ui/resourceUri'], 'ui://b__dashboard/view.html');
  });

  test("both tools' UIs are readable, each with its own server's content, under the URI the tool names", async () => {
    const { tools } = await client.listTools();
    for (const [name, server] of [
      ['a__show-dashboard', 'alpha'],
      ['b__show-dashboard', 'beta'],
    ] as const) {
      const resourceUri = (tools.find((tool) => tool.name === name)!._meta as any).ui.resourceUri as string;
      const content = await readUi(client, resourceUri);
      assert.equal(content.text, `<!DOCTYPE html><html><body>dashboard of ${server}</body></html>`);
      assert.equal(content.uri, resourceUri, 'the answer names the URI the host asked for');
      assert.equal(content.mimeType, 'text/html;profile=mcp-app');
    }
  });

  test('resources/list shows both views, namespaced; the templates too', async () => {
    const { resources } = await client.listResources();
    assert.deepEqual(resources.map((r) => r.uri).sort(), [
      'ui://a__dashboard/view.html',
      'ui://b__dashboard/view.html',
    ]);
    const { resourceTemplates } = await client.listResourceTemplates();
    assert.deepEqual(resourceTemplates.map((t) => t.uriTemplate).sort(), [
      'ui://a__dashboard/pages/{page}',
      'ui://b__dashboard/pages/{page}',
    ]);
  });

  test(
    'a ui:// URI no list names ' + '(the spec lets UI-only resources go unlisted) is placed by its namespace alone',
    async () => {
      const content = await readUi(client, 'ui://b__dashboard/pages/settings');
      assert.equal(content.text, '<!DOCTYPE html><html><body>page settings of beta</body></html>');
      assert.equal(content.uri, 'ui://b__dashboard/pages/settings');
    },
  );

  test('a ui:// read of an unknown namespace is the usual unknown-resource error', async () => {
    const unknownUi = await post(
      `${gateway.url}/mcp`,
      request('resources/read', { uri: 'ui://nobody__dashboard/view.html' }, 7),
    );
    const unknownOther = await post(`${gateway.url}/mcp`, request('resources/read', { uri: 'fixture://nobody' }, 7));
    assert.equal(unknownUi.status, unknownOther.status);
    assert.equal(unknownUi.body.error.code, -32602);
    assert.equal(
      unknownUi.body.error.message,
      'Resource not found: no upstream lists ui://nobody__dashboard/view.html or a template that matches it',
    );
    assert.deepEqual(unknownUi.body.error.data, { uri: 'ui://nobody__dashboard/view.html' });
    assert.equal(
      unknownOther.body.error.message,
      'Resource not found: no upstream lists fixture://nobody or a template that matches it',
    );
    // The server's own URI is not a /mcp one: it names no server there.
    const raw = await post(`${gateway.url}/mcp`, request('resources/read', { uri: VIEW }, 8));
    assert.equal(raw.body.error?.code, -32602);
  });

  test(
    'a subscription to a ui:// URI through /mcp is not honoured yet: ' + 'the acknowledgement leaves it out',
    async () => {
      const listen = await openListen(`${gateway.url}/mcp`, { resourceSubscriptions: ['ui://a__dashboard/view.html'] });
      try {
        await eventually(() => listen.messages.length > 0, 5_000);
        assert.equal(listen.messages[0].method, 'notifications/subscriptions/acknowledged');
        assert.deepEqual(listen.messages[0].params.notifications, { resourceSubscriptions: [] });
      } finally {
        listen.close();
      }
    },
  );

  test("a server cannot give its tool another server's UI: the URI it names stays in its own namespace", async () => {
    const { tools } = await client.listTools();
    const borrow = tools.find((tool) => tool.name === 'a__borrow')!;
    assert.equal((borrow._meta as any).ui.resourceUri, 'ui://a__b__dashboard/view.html');
    // The host reads it from a, which has no such view (its own error, in its own words); b's is never served for a's
    // tool.
    const read = await post(`${gateway.url}/mcp`, request('resources/read', { uri: 'ui://a__b__dashboard/view.html' }));
    assert.equal(read.body.result, undefined);
    assert.equal(read.body.error.code, -32602);
    assert.doesNotMatch(JSON.stringify(read.body), /beta/);
  });

  test('on /servers/<name>/mcp nothing is rewritten', async () => {
    const direct = await connect(`${gateway.url}/servers/b/mcp`);
    try {
      const { tools } = await direct.listTools();
      assert.equal((tools[0]!._meta as any).ui.resourceUri, VIEW);
      assert.equal((tools[0]!._meta as any)['ui/resourceUri'], VIEW);
      const { resources } = await direct.listResources();
      assert.deepEqual(
        resources.map((r) => r.uri),
        [VIEW],
      );
      const content = await readUi(direct, VIEW);
      assert.equal(content.uri, VIEW);
      assert.equal(content.text, '<!DOCTYPE html><html><body>dashboard of beta</body></html>');
    } finally {
      await direct.close();
    }
  });

  test('a profile shows and reads the ui:// URIs as /mcp names them', async () => {
    const view = await connect(`${gateway.url}/profiles/alphaonly/mcp`);
    try {
      const { tools } = await view.listTools();
      assert.deepEqual(
        tools.map((tool) => [tool.name, (tool._meta as any).ui.resourceUri]),
        [['a__show-dashboard', 'ui://a__dashboard/view.html']],
      );
      const { resources } = await view.listResources();
      assert.deepEqual(
        resources.map((r) => r.uri),
        ['ui://a__dashboard/view.html'],
      );
      assert.equal(
        (await readUi(view, 'ui://a__dashboard/view.html')).text,
        '<!DOCTYPE html><html><body>dashboard of alpha</body></html>',
      );
      await assert.rejects(view.readResource({ uri: 'ui://b__dashboard/view.html' }), /Resource not found/);
    } finally {
      await view.close();
    }
  });
});

describe('MCP Apps through /mcp onto a Streamable HTTP server', () => {
  let gateway: RunningGateway;
  let http: { url: string; names: string[]; close(): Promise<void> };
  before(async () => {
    http = await startAppsHttpServer('gamma');
    gateway = await startTestGateway({ a: apps('alpha'), c: { url: http.url } });
  });
  after(async () => {
    await gateway?.close();
    await http?.close();
  });

  test(
    'the read reaches the HTTP server under its own URI, in the body and in Mcp-Name, and comes back as /mcp ' +
      'names it',
    async () => {
      const body = request('resources/read', { uri: 'ui://c__dashboard/view.html' });
      const answer = await post(`${gateway.url}/mcp`, body, headersFor(body));
      assert.deepEqual(answer.body.result.contents[0], {
        uri: 'ui://c__dashboard/view.html',
        mimeType: 'text/html;profile=mcp-app',
        text: '<!DOCTYPE html><html><body>dashboard of gamma</body></html>',
      });
      assert.ok(http.names.includes(VIEW), `the server was asked for ${VIEW} (Mcp-Name: ${http.names.join(', ')})`);
      assert.ok(!http.names.some((name) => name.includes('c__')), 'never under the /mcp form');
      const alpha = await post(`${gateway.url}/mcp`, request('resources/read', { uri: 'ui://a__dashboard/view.html' }));
      assert.equal(alpha.body.result.contents[0].text, '<!DOCTYPE html><html><body>dashboard of alpha</body></html>');
    },
  );
});

/** ext-apps' server on SDK v2's Streamable HTTP handler; records the Mcp-Name of every request. */
async function startAppsHttpServer(id: string): Promise<{ url: string; names: string[]; close(): Promise<void> }> {
  process.env.FIXTURE_NO_STDIO = '1';
  const { createAppsServer } = await import('../fixtures/apps-server.js').finally(
    () => delete process.env.FIXTURE_NO_STDIO,
  );
  const handler = createMcpHandler(() => createAppsServer(id, undefined), { legacy: 'reject' });
  const names: string[] = [];
  const server = await new Promise<Server>((resolve) => {
    const s = serve(
      {
        fetch: (incoming: Request) => {
          const name = incoming.headers.get('mcp-name');
          if (name !== null) names.push(name);
          return handler.fetch(incoming);
        },
        hostname: '127.0.0.1',
        port: 0,
      },
      () => resolve(s as Server),
    ) as Server;
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    names,
    async close() {
      await handler.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

describe('MCP Apps and policy: a ui:// URI is judged as its server names it, on every endpoint', () => {
  let gateway: RunningGateway;
  before(async () => {
    gateway = await startTestGateway(
      SERVERS,
      {},
      {
        auth: { anonymous: true },
        audit: { destination: path.join(tempDir('mcp-apps-'), 'audit.jsonl') },
        policies: [
          {
            name: 'no-beta-views',
            principals: { ids: ['*'] },
            allow: { servers: ['a', 'b'] },
            deny: { servers: ['b'], resources: ['ui://dashboard/**'] },
          },
        ],
      },
    );
  });
  after(() => gateway?.close());

  const read = (url: string, uri: string) => {
    const body = request('resources/read', { uri }, 9);
    return post(url, body, headersFor(body));
  };

  test(
    "a deny of b's own ui:// URIs holds on /mcp, where they are namespaced: " + 'refused as unknown, and not listed',
    async () => {
      const denied = await read(`${gateway.url}/mcp`, 'ui://b__dashboard/view.html');
      assert.deepEqual(denied.body.error, {
        code: -32602,
        message: 'Resource not found: ui://b__dashboard/view.html',
        data: { uri: 'ui://b__dashboard/view.html' },
      });
      const unlisted = await read(`${gateway.url}/mcp`, 'ui://b__dashboard/pages/settings');
      assert.equal(unlisted.body.error?.code, -32602, 'a URI the template serves is denied too');
      const direct = await read(`${gateway.url}/servers/b/mcp`, VIEW);
      assert.equal(direct.body.error?.code, -32602, 'and on /servers/b/mcp');
      const allowed = await read(`${gateway.url}/mcp`, 'ui://a__dashboard/view.html');
      assert.equal(allowed.body.result.contents[0].text, '<!DOCTYPE html><html><body>dashboard of alpha</body></html>');
      const listBody = request('resources/list');
      const list = await post(`${gateway.url}/mcp`, listBody, headersFor(listBody));
      assert.deepEqual(
        list.body.result.resources.map((r: { uri: string }) => r.uri),
        ['ui://a__dashboard/view.html'],
      );
      const templatesBody = request('resources/templates/list');
      const templates = await post(`${gateway.url}/mcp`, templatesBody, headersFor(templatesBody));
      assert.deepEqual(
        templates.body.result.resourceTemplates.map((t: { uriTemplate: string }) => t.uriTemplate),
        ['ui://a__dashboard/pages/{page}'],
      );
    },
  );
});
