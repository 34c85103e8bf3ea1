// A stdio-only host meets a gateway whose only server is per-user (type: oauth) through mcp-remote (issue 46,
// "Done when" first item): the host lists tools and sees the connect tool, a call of the server's real tool
// brings back the connect link (a JSON-RPC error -32042 carrying the URL, passed through mcp-remote as it came),
// the person completes it in a real browser (headless Chromium, oidc-provider), and the same call then answers
// as them; on /mcp and on /servers/<name>/mcp, for a 2026-07-28 host (the SDK v2 client, pinned) and a 2025 one
// (SDK 1.x). Each host is a principal of its own who never connected before. mcp-remote runs with HOME, its
// config dir and PATH in a temp folder, the gateway's API key in its environment: no OAuth of its own starts.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Stream } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { Client as Client2 } from '@modelcontextprotocol/client';
import { StdioClientTransport as Stdio2 } from '@modelcontextprotocol/client/stdio';
import { Client as Client1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as Stdio1 } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { IdentityServer } from '../fixtures/identity-server.js';
import { chromium } from '../services.js';
import { tempDir } from '../temp.js';
import { ROOT, VERSION } from './harness.js';
import type { OAuthRig } from './oauth-rig.js';
import { startPerUserRig } from './per-user-rig.js';

const browserNeed = await chromium('mcp-remote meeting a per-user gateway, connected in headless Chromium');
const MCP_REMOTE = path.join(ROOT, 'node_modules/mcp-remote/dist/proxy.js');
const KEYS = {
  hana: 'hana-api-key-0123456789abcdef',
  ivo: 'ivo-api-key-0123456789abcdef',
  jun: 'jun-api-key-0123456789abcdef',
};
type Who = keyof typeof KEYS;

/** What a test needs of a host: its tool names, and a call's result or the JSON-RPC error it was refused with. */
interface Host {
  toolNames(): Promise<string[]>;
  call(name: string): Promise<{ text?: string; code?: number; url?: string }>;
  stderr(): string;
  close(): Promise<void>;
}

/**
 * A call's text, or the code and link of the error a client library threw for it. Both SDKs turn a -32042 that
 * carries the 2025-11-25 shape (`elicitations`) into their UrlElicitationRequiredError, keeping only that array:
 * the link is read there, as a host reads it.
 */
async function outcome(call: () => Promise<{ content?: unknown }>) {
  try {
    const result = await call();
    return { text: (result.content as { text?: string }[] | undefined)?.[0]?.text };
  } catch (error) {
    const { code, data } = error as { code?: number; data?: { elicitations?: { url?: string }[] } };
    if (code === undefined) throw error;
    return { code, url: data?.elicitations?.[0]?.url };
  }
}

describe('mcp-remote in front of a gateway whose only server is per-user', { skip: browserNeed.skip }, () => {
  let rig: OAuthRig<IdentityServer>;
  const client = { client_id: 'gw-mcp-remote', client_secret: 'gw-mcp-remote-secret-0123456789' };
  const hosts: Host[] = [];
  const tmp = tempDir('mcp-remote-per-user-');
  for (const dir of ['home', 'bin']) mkdirSync(path.join(tmp, dir));

  before(async () => {
    browserNeed.check();
    rig = await startPerUserRig({ browserPath: browserNeed.path!, client, keys: KEYS, dir: tmp });
  });

  after(async () => {
    for (const host of hosts) await host.close().catch(() => {});
    await rig?.close();
  });

  /** How a host config starts mcp-remote for `who`: the key stays in GW_KEY, which mcp-remote expands itself. */
  const mcpRemote = (endpoint: string, who: Who) => ({
    command: process.execPath,
    args: [MCP_REMOTE, `${rig.gateway.url}${endpoint}`, '--header', 'Authorization: Bearer ${GW_KEY}'],
    env: {
      HOME: path.join(tmp, 'home'),
      MCP_REMOTE_CONFIG_DIR: path.join(tmp, `mcp-auth-${who}`),
      PATH: path.join(tmp, 'bin'),
      GW_KEY: KEYS[who],
    },
    cwd: tmp,
    stderr: 'pipe' as const,
  });

  const collect = (transport: { stderr: Stream | null }) => {
    let text = '';
    transport.stderr?.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    return () => text;
  };

  /** The SDK v2 client pinned to 2026-07-28 as the host, through mcp-remote. */
  async function modernHost(endpoint: string, who: Who): Promise<Host> {
    const transport = new Stdio2(mcpRemote(endpoint, who));
    const stderr = collect(transport);
    const sdk = new Client2(
      { name: 'per-user-host-2026', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: VERSION } } },
    );
    await sdk.connect(transport);
    const host: Host = {
      toolNames: async () => (await sdk.listTools()).tools.map((tool) => tool.name),
      call: (name) => outcome(() => sdk.callTool({ name, arguments: {} })),
      stderr,
      close: () => sdk.close(),
    };
    hosts.push(host);
    return host;
  }

  /** The SDK 1.x client (initialize, then a session) as the host, through mcp-remote. */
  async function legacyHost(endpoint: string, who: Who): Promise<Host> {
    const transport = new Stdio1(mcpRemote(endpoint, who));
    const stderr = collect(transport);
    const sdk = new Client1({ name: 'per-user-host-2025', version: '1.0.0' });
    await sdk.connect(transport);
    const host: Host = {
      toolNames: async () => (await sdk.listTools()).tools.map((tool) => tool.name),
      call: (name) => outcome(() => sdk.callTool({ name, arguments: {} }) as Promise<{ content?: unknown }>),
      stderr,
      close: () => sdk.close(),
    };
    hosts.push(host);
    return host;
  }

  const CASES = [
    { host: '2026-07-28 host (SDK v2)', start: modernHost, endpoint: '/mcp', who: 'hana', tool: 'crm__whoami' },
    { host: '2026-07-28 host (SDK v2)', start: modernHost, endpoint: '/servers/crm/mcp', who: 'ivo', tool: 'whoami' },
    { host: '2025 host (SDK 1.x)', start: legacyHost, endpoint: '/mcp', who: 'jun', tool: 'crm__whoami' },
  ] as const;

  for (const { host: kind, start, endpoint, who, tool } of CASES) {
    test(
      `${kind} → mcp-remote → ${endpoint}: ` + `sees the connect tool, connects in a browser, calls ${tool}`,
      async () => {
        const host = await start(endpoint, who);
        const before = await host.toolNames();
        if (endpoint === '/mcp') assert.deepEqual(before, ['crm__connect'], host.stderr());
        else assert.ok(before.includes('connect'), `the connect tool is listed: ${before.join()}`);

        const refused = await host.call(tool);
        assert.equal(refused.code, -32042, `the connect link, not a tool error: ${JSON.stringify(refused)}`);
        assert.ok(refused.url?.startsWith(`${rig.gateway.url}/connect/`), `a link on the gateway: ${refused.url}`);
        assert.equal(await rig.connectInBrowser(refused.url!, `${who}-at-crm`), 'Connected to crm');

        // No list in between: the same call now reaches crm with this person's own token.
        assert.deepEqual(await host.call(tool), { text: `you are ${who}-at-crm` });
        const after = await host.toolNames();
        assert.ok(after.includes(tool), `the list now holds crm's own tools: ${after.join()}`);
        assert.ok(!after.includes(endpoint === '/mcp' ? 'crm__connect' : 'connect'), 'and no connect tool');
      },
    );
  }
});
