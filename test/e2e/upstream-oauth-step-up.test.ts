// Step-up authorization (MCP basic/authorization, "Scope Challenge Handling"), end to end: oidc-provider as
// the upstream's authorization server, an SDK v2 server that answers 403 `insufficient_scope` naming the
// scope a tool needs, and headless Chromium doing the person's part. A caller connected with the scopes the
// resource lists (read) calls a tool that needs `write`: the gateway sends them through the connect flow
// again asking for the union (read write), and the retry goes out with the new token. A server that keeps
// refusing a scope the token was already asked for gets an error naming it, not another link (no loop).
import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { serve } from '@hono/node-server';
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';
import { createRemoteJWKSet, jwtVerify, type JWTPayload } from 'jose';
import type { Page } from 'playwright-core';
import type { RunningGateway } from '../../src/gateway.js';
import { createLogger } from '../../infra/logger.js';
import type { Oidc } from '../fixtures/oidc.js';
import { chromium } from '../services.js';
import { tempDir } from '../temp.js';
import { callToolAs, startOAuthRig, type OAuthRig } from './oauth-rig.js';

const browserNeed = await chromium('the step-up flow in headless Chromium');
const KEY = 'alice-api-key-0123456789abcdef';

/** The scope each tool needs; `stubborn` refuses every token for want of `write`, granted or not. */
const NEEDS: Record<string, string> = { note: 'write', stubborn: 'write' };

interface ScopedServer {
  url: string;
  /** The scope claim of each token that reached a tool, in order. */
  scopes: string[];
  close(): Promise<void>;
}

async function startScopedServer(issuer: string, jwksUrl: string): Promise<ScopedServer> {
  const jwks = createRemoteJWKSet(new URL(jwksUrl));
  const scopes: string[] = [];
  const state = { url: '' };
  const handler = createMcpHandler(
    () => {
      const server = new McpServer({ name: 'scoped-server', version: '1.0.0' });
      for (const name of ['read', 'note', 'stubborn']) {
        server.registerTool(name, { description: `${name} (needs ${NEEDS[name] ?? 'read'})` }, async () => ({ content: [{ type: 'text' as const, text: `${name} done` }] }));
      }
      return server;
    },
    { legacy: 'reject' },
  );
  const metadataUrl = () => new URL('/.well-known/oauth-protected-resource/mcp', state.url).href;
  const fetch = async (incoming: Request): Promise<Response> => {
    if (incoming.method === 'GET' && new URL(incoming.url).pathname === '/.well-known/oauth-protected-resource/mcp') {
      return Response.json({ resource: state.url, authorization_servers: [issuer], scopes_supported: ['read'] });
    }
    const token = /^Bearer (.+)$/.exec(incoming.headers.get('authorization') ?? '')?.[1];
    let payload: JWTPayload | undefined;
    try {
      if (token) payload = (await jwtVerify(token, jwks, { issuer, audience: state.url })).payload;
    } catch {}
    if (!payload) return new Response(null, { status: 401, headers: { 'www-authenticate': `Bearer resource_metadata="${metadataUrl()}"` } });
    const body = (await incoming.clone().json()) as { method?: string; params?: { name?: string } };
    const granted = String(payload.scope ?? '').split(' ');
    const tool = body.method === 'tools/call' ? (body.params?.name ?? '') : '';
    const needs = NEEDS[tool];
    if (needs !== undefined && (tool === 'stubborn' || !granted.includes(needs))) {
      return new Response(JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: 'insufficient scope' } }), {
        status: 403,
        headers: {
          'content-type': 'application/json',
          'www-authenticate': `Bearer error="insufficient_scope", scope="${needs}", resource_metadata="${metadataUrl()}", error_description="${tool} needs ${needs}"`,
        },
      });
    }
    if (tool) scopes.push(String(payload.scope ?? ''));
    return handler.fetch(incoming);
  };
  const server = await new Promise<Server>((resolve) => {
    const s = serve({ fetch, hostname: '127.0.0.1', port: 0 }, () => resolve(s as Server)) as Server;
  });
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  return {
    url: state.url,
    scopes,
    async close() {
      await handler.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

describe('oauth step-up: 403 insufficient_scope sends the caller to authorize the union of scopes', { skip: browserNeed.skip }, () => {
  let rig: OAuthRig<ScopedServer>;
  let oidc: Oidc;
  let upstream: ScopedServer;
  let gateway: RunningGateway;
  const client = { client_id: 'gw-step-up', client_secret: 'gw-step-up-secret-0123456789' };
  const authorizeRequests: URL[] = [];

  before(async () => {
    browserNeed.check();
    rig = await startOAuthRig({
      browserPath: browserNeed.path!,
      client,
      upstream: startScopedServer,
      config: (at) => ({
        listen: { port: at.port, publicUrl: at.publicUrl },
        auth: { apiKeys: [{ key: KEY, principal: 'alice' }] },
        credentials: { key: 'an-upstream-credentials-key-of-32-bytes-or-more', store: 'file', file: path.join(tempDir('oauth-step-up-'), 'c.json') },
        servers: { crm: { url: at.upstream.url, credentials: { type: 'oauth', clientId: client.client_id, clientSecret: client.client_secret } } },
      }),
      log: createLogger('silent'),
      server: 'crm',
    });
    ({ oidc, upstream, gateway } = rig);
  });

  after(() => rig?.close());

  const call = (name: string, extra: Record<string, unknown> = {}) => callToolAs(`${gateway.url}/servers/crm/mcp`, KEY, name, extra);

  /** The authorization requests the browser makes are kept for the test. */
  const keepAuthorizeRequests = (page: Page) =>
    page.on('request', (r) => {
      if (r.url().startsWith(`${oidc.issuer}/auth?`)) authorizeRequests.push(new URL(r.url()));
    });
  const connectInBrowser = (link: string) => rig.connectInBrowser(link, 'alice-at-crm', keepAuthorizeRequests);

  test('connected with read, a call needing write gets a step-up link for "read write"; the retry goes out with the new token', async () => {
    const first = await call('read');
    assert.equal(first.body.error?.code, -32042, JSON.stringify(first.body));
    assert.equal(await connectInBrowser(first.body.error.data.url), 'Connected to crm');
    assert.equal(authorizeRequests.at(-1)?.searchParams.get('scope'), 'read offline_access', 'scopes_supported, and offline_access since the AS lists it');
    assert.equal((await call('read')).body.result?.content[0].text, 'read done');

    // The URL-elicitation path: the step-up link arrives as input_required, and the retry echoes requestState.
    const meta = { 'io.modelcontextprotocol/clientCapabilities': { elicitation: { url: {} } } };
    const refused = await call('note', { _meta: meta });
    assert.equal(refused.body.result?.resultType, 'input_required', JSON.stringify(refused.body));
    const [key, elicitation] = Object.entries(refused.body.result.inputRequests)[0] as [string, { params: { url: string; message: string } }];
    assert.match(elicitation.params.message, /scope read offline_access write/);
    assert.equal(await connectInBrowser(elicitation.params.url), 'Connected to crm');
    assert.deepEqual(
      authorizeRequests.at(-1)?.searchParams.get('scope')?.split(' ').sort(),
      ['offline_access', 'read', 'write'],
      'the union of what was asked and what the 403 asked',
    );
    const retry = await call('note', { _meta: meta, requestState: refused.body.result.requestState, inputResponses: { [key]: { action: 'accept' } } });
    assert.equal(retry.body.result?.content?.[0].text, 'note done', JSON.stringify(retry.body));
    assert.ok(upstream.scopes.at(-1)!.split(' ').includes('write'), 'the retry carried the stepped-up token');
    assert.equal((await call('read')).body.result?.content[0].text, 'read done', 'earlier permissions kept');
  });

  test('a 403 for a scope the token was already authorized asking for is an error naming it, not another link', async () => {
    const answer = await call('stubborn');
    assert.equal(answer.body.error?.data?.reason, 'insufficient_scope', JSON.stringify(answer.body));
    assert.match(answer.body.error.message, /scope "write"/);
    assert.equal(answer.body.error.data.url, undefined, 'no link: asking again would loop');
    // The token in the store is still good for what it was granted.
    assert.equal((await call('note')).body.result?.content[0].text, 'note done');
  });
});
