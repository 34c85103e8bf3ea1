// A gateway whose only server is per-user (type: oauth), met by the official SDK v2 client (issue 46 item 1):
// server/discover never needs a credential and advertises tools, so the client lists tools and sees the
// connect tool on /mcp, and its connect() succeeds on /servers/<name>/mcp. A caller who never listed gets the
// connect link for any name under the server's prefix (issue 45 item 3), and after connecting in a real
// browser the same call, with no list in between, answers. Real parts: oidc-provider, Chromium.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { IdentityServer } from '../fixtures/identity-server.js';
import { chromium } from '../services.js';
import { tempDir } from '../temp.js';
import { request, send, until, VERSION } from './harness.js';
import type { OAuthRig } from './oauth-rig.js';
import { startPerUserRig } from './per-user-rig.js';

const browserNeed = await chromium('the connect flow in headless Chromium');
const KEYS = { fay: 'fay-api-key-0123456789abcdef', gil: 'gil-api-key-0123456789abcdef' };
type Who = keyof typeof KEYS;

describe('a gateway whose only server is per-user', { skip: browserNeed.skip }, () => {
  let rig: OAuthRig<IdentityServer>;
  const client = { client_id: 'gw-discover', client_secret: 'gw-discover-secret-0123456789' };
  const opened: Client[] = [];

  before(async () => {
    browserNeed.check();
    rig = await startPerUserRig({
      browserPath: browserNeed.path!,
      client,
      keys: KEYS,
      dir: tempDir('mcp-gw-per-user-discover-'),
    });
  });

  after(async () => {
    for (const sdk of opened) await sdk.close().catch(() => {});
    await rig?.close();
  });

  /** The SDK v2 client, connected to `path` on the gateway as `who`. */
  async function sdkClient(path: string, who: Who): Promise<Client> {
    // Pinned to 2026-07-28, as a stateless client: connect() is server/discover, which is what is tested here.
    const sdk = new Client(
      { name: 'per-user-discover', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: VERSION } } },
    );
    opened.push(sdk);
    const transport = new StreamableHTTPClientTransport(new URL(`${rig.gateway.url}${path}`), {
      requestInit: { headers: { authorization: `Bearer ${KEYS[who]}` } },
    });
    await sdk.connect(transport);
    return sdk;
  }

  /**
   * The SDK v2 client left to negotiate (2025-11-25 with this gateway, then a GET stream on its session), and
   * what arrived on that GET stream so far: the stream's own text, and whether it ended.
   */
  async function unpinnedClient(path: string, who: Who) {
    const stream = { opened: 0, text: '', ended: false };
    const watchGet: typeof fetch = async (url, init) => {
      const response = await fetch(url, init);
      if (init?.method !== 'GET' || response.body === null) return response;
      stream.opened++;
      const [kept, watched] = response.body.tee();
      void (async () => {
        const decoder = new TextDecoder();
        try {
          for await (const chunk of watched) stream.text += decoder.decode(chunk, { stream: true });
        } catch {}
        stream.ended = true;
      })();
      return new Response(kept, { status: response.status, headers: response.headers });
    };
    const sdk = new Client({ name: 'per-user-discover-unpinned', version: '1.0.0' });
    opened.push(sdk);
    const transport = new StreamableHTTPClientTransport(new URL(`${rig.gateway.url}${path}`), {
      requestInit: { headers: { authorization: `Bearer ${KEYS[who]}` } },
      fetch: watchGet,
    });
    await sdk.connect(transport);
    return { sdk, transport, stream };
  }

  const mcp = (who: Who, method: string, params: Record<string, unknown> = {}) =>
    send(`${rig.gateway.url}/mcp`, request(method, params), { authorization: `Bearer ${KEYS[who]}` });

  test('on /mcp, the SDK client sees tools advertised and lists the connect tool', async () => {
    const sdk = await sdkClient('/mcp', 'fay');
    assert.ok(sdk.getServerCapabilities()?.tools, JSON.stringify(sdk.getServerCapabilities()));
    const { tools } = await sdk.listTools();
    assert.deepEqual(
      tools.map((tool) => tool.name),
      ['crm__connect'],
    );
  });

  test('on /servers/crm/mcp, discover answers without a credential and connect() succeeds', async () => {
    const raw = await send(`${rig.gateway.url}/servers/crm/mcp`, request('server/discover'), {
      authorization: `Bearer ${KEYS.fay}`,
    });
    assert.ok(raw.body.result?.capabilities?.tools, JSON.stringify(raw.body));
    const sdk = await sdkClient('/servers/crm/mcp', 'fay');
    assert.ok(sdk.getServerCapabilities()?.tools);
  });

  // The SDK's GET stream was answered with a second head over the stream's own (ERR_HTTP_HEADERS_SENT), and
  // cut with "Error: …" in it, when another @hono/node-server listener (here the upstream) ran in the process.
  for (const path of ['/mcp', '/servers/crm/mcp']) {
    test(`on ${path}, an SDK client not pinned to a version gets a GET stream that stays open`, async () => {
      const { sdk, transport, stream } = await unpinnedClient(path, 'fay');
      assert.equal(transport.protocolVersion, '2025-11-25');
      assert.ok(sdk.getServerCapabilities()?.tools);
      assert.ok(await until(() => stream.opened > 0, 30_000), 'the client opened its GET stream');
      // Two round trips on the session after the stream's head: a cut stream has ended by then.
      await sdk.listTools().catch(() => {});
      await sdk.ping();
      assert.equal(stream.text.includes('Error'), false, stream.text);
      assert.equal(stream.ended, false, 'the GET stream is still open');
      assert.equal(stream.opened, 1, 'no reconnection');
    });
  }

  test('a caller who never listed calls crm__whoami and gets the connect link; once connected it answers', async () => {
    const first = await mcp('gil', 'tools/call', { name: 'crm__whoami', arguments: {} });
    assert.equal(first.body.error?.code, -32042, JSON.stringify(first.body));
    const link: string = first.body.error.data.url;
    assert.match(link, /\/connect\//);
    assert.equal(await rig.connectInBrowser(link, 'gil-at-crm'), 'Connected to crm');
    const again = await mcp('gil', 'tools/call', { name: 'crm__whoami', arguments: {} });
    assert.equal(again.body.result?.content?.[0]?.text, 'you are gil-at-crm', JSON.stringify(again.body));
    // The SDK client, as gil, now lists crm's own tools, and calls one.
    const sdk = await sdkClient('/mcp', 'gil');
    const { tools } = await sdk.listTools();
    assert.ok(
      tools.some((tool) => tool.name === 'crm__whoami'),
      tools.map((tool) => tool.name).join(),
    );
    const result = await sdk.callTool({ name: 'crm__whoami', arguments: {} });
    assert.deepEqual(result.content, [{ type: 'text', text: 'you are gil-at-crm' }]);
  });
});
