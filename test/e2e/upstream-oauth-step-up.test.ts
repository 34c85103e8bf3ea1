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
import { type Answer, fixture, request, send } from './harness.js';
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
        server.registerTool(name, { description: `${name} (needs ${NEEDS[name] ?? 'read'})` }, async () => ({
          content: [{ type: 'text' as const, text: `${name} done` }],
        }));
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
    if (!payload)
      return new Response(null, {
        status: 401,
        headers: { 'www-authenticate': `Bearer resource_metadata="${metadataUrl()}"` },
      });
    const body = (await incoming.clone().json()) as { method?: string; params?: { name?: string } };
    const granted = String(payload.scope ?? '').split(' ');
    const tool = body.method === 'tools/call' ? (body.params?.name ?? '') : '';
    const needs = NEEDS[tool];
    if (needs !== undefined && (tool === 'stubborn' || !granted.includes(needs))) {
      return new Response(JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: 'insufficient scope' } }), {
        status: 403,
        headers: {
          'content-type': 'application/json',
          'www-authenticate':
            `Bearer error="insufficient_scope", scope="${needs}", ` +
            `resource_metadata="${metadataUrl()}", error_description="${tool} needs ${needs}"`,
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

describe('oauth step-up: 403 insufficient_scope sends the caller to authorize the union of scopes', {
  skip: browserNeed.skip,
}, () => {
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
        auth: { apiKeys: [{ key: KEY, principal: 'alice' }] },
        credentials: {
          key: 'an-upstream-credentials-key-of-32-bytes-or-more',
          store: 'file',
          file: path.join(tempDir('oauth-step-up-'), 'c.json'),
        },
        servers: {
          crm: {
            url: at.upstream.url,
            credentials: { type: 'oauth', clientId: client.client_id, clientSecret: client.client_secret },
          },
        },
      }),
      log: createLogger('silent'),
      server: 'crm',
    });
    ({ oidc, upstream, gateway } = rig);
  });

  after(() => rig?.close());

  const call = (name: string, extra: Record<string, unknown> = {}) =>
    callToolAs(`${gateway.url}/servers/crm/mcp`, KEY, name, extra);

  /** The authorization requests the browser makes are kept for the test. */
  const keepAuthorizeRequests = (page: Page) =>
    page.on('request', (r) => {
      if (r.url().startsWith(`${oidc.issuer}/auth?`)) authorizeRequests.push(new URL(r.url()));
    });
  const connectInBrowser = (link: string) => rig.connectInBrowser(link, 'alice-at-crm', keepAuthorizeRequests);

  test(
    'connected with read, a call needing write gets a step-up link for "read write"; the retry goes out with the ' +
      'new token',
    async () => {
      const first = await call('read');
      assert.equal(first.body.error?.code, -32042, JSON.stringify(first.body));
      assert.equal(await connectInBrowser(first.body.error.data.url), 'Connected to crm');
      assert.equal(
        authorizeRequests.at(-1)?.searchParams.get('scope'),
        'read offline_access',
        'scopes_supported, and offline_access since the AS lists it',
      );
      assert.equal((await call('read')).body.result?.content[0].text, 'read done');

      // The URL-elicitation path: the step-up link arrives as input_required, and the retry echoes requestState.
      const meta = { 'io.modelcontextprotocol/clientCapabilities': { elicitation: { url: {} } } };
      const refused = await call('note', { _meta: meta });
      assert.equal(refused.body.result?.resultType, 'input_required', JSON.stringify(refused.body));
      const [key, elicitation] = Object.entries(refused.body.result.inputRequests)[0] as [
        string,
        { params: { url: string; message: string } },
      ];
      assert.match(elicitation.params.message, /scope read offline_access write/);
      assert.equal(await connectInBrowser(elicitation.params.url), 'Connected to crm');
      assert.deepEqual(
        authorizeRequests.at(-1)?.searchParams.get('scope')?.split(' ').sort(),
        ['offline_access', 'read', 'write'],
        'the union of what was asked and what the 403 asked',
      );
      const retry = await call('note', {
        _meta: meta,
        requestState: refused.body.result.requestState,
        inputResponses: { [key]: { action: 'accept' } },
      });
      assert.equal(retry.body.result?.content?.[0].text, 'note done', JSON.stringify(retry.body));
      assert.ok(upstream.scopes.at(-1)!.split(' ').includes('write'), 'the retry carried the stepped-up token');
      assert.equal((await call('read')).body.result?.content[0].text, 'read done', 'earlier permissions kept');
    },
  );

  test(
    'a 403 for a scope the token was already authorized asking for is an error naming it, ' + 'not another link',
    async () => {
      const answer = await call('stubborn');
      assert.equal(answer.body.error?.data?.reason, 'insufficient_scope', JSON.stringify(answer.body));
      assert.match(answer.body.error.message, /scope "write"/);
      assert.equal(answer.body.error.data.url, undefined, 'no link: asking again would loop');
      // The token in the store is still good for what it was granted.
      assert.equal((await call('note')).body.result?.content[0].text, 'note done');
    },
  );
});

// The same step-up through the aggregated endpoint, /mcp, where crm's tools are `crm__read`, `crm__note` and
// `crm__stubborn` beside another server's, and a caller who has not connected crm sees its connect placeholder
// (`crm__connect`, src/aggregate/connect-placeholder.ts) instead. The step-up's link must come in the answer a
// connect flow on /mcp gives (the placeholder's: error -32042 with data.url, or URL-mode elicitation with the
// gateway's requestState), and the retry must reach crm's tool with the stepped-up token. Each test connects a
// caller of its own first (through /mcp: the placeholder), so either runs alone.
const MCP_KEYS: Record<string, string> = {
  carol: 'carol-api-key-0123456789abcdef',
  dave: 'dave-api-key-0123456789abcdefgh',
};
const URL_ELICITATION = { 'io.modelcontextprotocol/clientCapabilities': { elicitation: { url: {} } } };

/** A connect answer's form, its link's id and its words aside: what a client acts on. */
function connectForm(answer: Answer): Record<string, unknown> {
  const link = (url: unknown) => (typeof url === 'string' ? url.replace(/\/connect\/[^/?#]+$/, '/connect/<id>') : url);
  const { error, result } = answer.body ?? {};
  if (error) {
    // The link's id, and the message naming what is asked, differ from one answer to the next; the shape must not.
    const elicitations = (error.data?.elicitations as Record<string, unknown>[] | undefined)?.map((asked) => ({
      fields: Object.keys(asked).sort(),
      mode: asked.mode,
      url: link(asked.url),
    }));
    return {
      status: answer.status,
      code: error.code,
      data: { ...error.data, url: link(error.data?.url), elicitations },
    };
  }
  const requests = Object.entries(
    (result?.inputRequests ?? {}) as Record<string, { method: string; params: Record<string, unknown> }>,
  ).map(([key, asked]) => ({
    key,
    method: asked.method,
    params: Object.keys(asked.params).sort(),
    mode: asked.params.mode,
    url: link(asked.params.url),
  }));
  return {
    status: answer.status,
    resultType: result?.resultType,
    keys: Object.keys(result ?? {}).sort(),
    requests,
    requestState: result?.requestState,
  };
}

describe('oauth step-up through /mcp: the namespaced tool gets the connect answer /mcp gives, and the retry the new ' +
  'token', {
  skip: browserNeed.skip,
}, () => {
  let rig: OAuthRig<ScopedServer>;
  let oidc: Oidc;
  let upstream: ScopedServer;
  let gateway: RunningGateway;
  const client = { client_id: 'gw-step-up-mcp', client_secret: 'gw-step-up-mcp-secret-0123456789' };
  const authorizeRequests: URL[] = [];

  before(async () => {
    browserNeed.check();
    rig = await startOAuthRig({
      browserPath: browserNeed.path!,
      client,
      upstream: startScopedServer,
      config: (at) => ({
        auth: { apiKeys: Object.entries(MCP_KEYS).map(([principal, key]) => ({ key, principal })) },
        credentials: {
          key: 'an-upstream-credentials-key-of-32-bytes-or-more',
          store: 'file',
          file: path.join(tempDir('oauth-step-up-mcp-'), 'c.json'),
        },
        servers: {
          local: fixture('modern-server'),
          crm: {
            url: at.upstream.url,
            credentials: { type: 'oauth', clientId: client.client_id, clientSecret: client.client_secret },
          },
        },
      }),
      log: createLogger('silent'),
      server: 'crm',
    });
    ({ oidc, upstream, gateway } = rig);
  });

  after(() => rig?.close());

  const mcp = (who: string, name: string, extra: Record<string, unknown> = {}) =>
    callToolAs(`${gateway.url}/mcp`, MCP_KEYS[who]!, name, extra);
  const toolNames = async (who: string) => {
    const answer = await send(`${gateway.url}/mcp`, request('tools/list'), {
      authorization: `Bearer ${MCP_KEYS[who]}`,
    });
    assert.ok(answer.body.result, JSON.stringify(answer.body));
    return (answer.body.result.tools as { name: string }[]).map((t) => t.name);
  };
  const connectInBrowser = (link: string, login: string) =>
    rig.connectInBrowser(link, login, (page) =>
      page.on('request', (r) => {
        if (r.url().startsWith(`${oidc.issuer}/auth?`)) authorizeRequests.push(new URL(r.url()));
      }),
    );
  const lastAskedScopes = () => authorizeRequests.at(-1)?.searchParams.get('scope')?.split(' ').sort();

  /**
   * Connects `who` to crm through /mcp's placeholder, asked for what crm lists (read); returns the
   * placeholder's answers (plain, and to a client that declared URL elicitation): the connect answers of /mcp.
   */
  async function connectWithRead(who: string): Promise<{ plain: Answer; elicited: Answer }> {
    const before = await toolNames(who);
    assert.ok(before.includes('crm__connect') && before.includes('local__echo'), before.join());
    assert.ok(!before.includes('crm__note'), before.join());
    const elicited = await mcp(who, 'crm__connect', { _meta: URL_ELICITATION });
    assert.equal(elicited.body.result?.resultType, 'input_required', JSON.stringify(elicited.body));
    const plain = await mcp(who, 'crm__connect');
    assert.equal(plain.body.error?.code, -32042, JSON.stringify(plain.body));
    assert.equal(await connectInBrowser(plain.body.error.data.url, `${who}-at-crm`), 'Connected to crm');
    assert.deepEqual(lastAskedScopes(), ['offline_access', 'read'], 'scopes_supported, and offline_access');
    const after = await toolNames(who);
    for (const name of ['crm__read', 'crm__note', 'crm__stubborn']) assert.ok(after.includes(name), after.join());
    const read = await mcp(who, 'crm__read');
    assert.equal(read.body.result?.content?.[0].text, 'read done', JSON.stringify(read.body));
    assert.ok(
      !upstream.scopes.at(-1)!.split(' ').includes('write'),
      `connected with read only: ${upstream.scopes.at(-1)}`,
    );
    return { plain, elicited };
  }

  test(
    'on /mcp, crm__note (needs write) answers with /mcp’s connect answer asking for "read write"; the retry ' +
      'reaches crm with a read write token',
    async () => {
      const placeholder = await connectWithRead('carol');

      // Both forms of the step-up link are the forms /mcp's connect flow takes.
      const plain = await mcp('carol', 'crm__note');
      assert.equal(plain.body.error?.code, -32042, JSON.stringify(plain.body));
      assert.deepEqual(connectForm(plain), connectForm(placeholder.plain));
      assert.equal(plain.body.error.data.reason, 'connect_required');
      assert.ok(plain.body.error.data.url.startsWith(`${rig.publicUrl}/connect/`), plain.body.error.data.url);
      assert.match(plain.body.error.message, /scope read offline_access write/);
      const refused = await mcp('carol', 'crm__note', { _meta: URL_ELICITATION });
      assert.equal(refused.body.result?.resultType, 'input_required', JSON.stringify(refused.body));
      assert.deepEqual(connectForm(refused), connectForm(placeholder.elicited));
      const [key, elicitation] = Object.entries(refused.body.result.inputRequests)[0] as [
        string,
        { params: { url: string; message: string } },
      ];
      assert.match(elicitation.params.message, /scope read offline_access write/);
      assert.equal(
        elicitation.params.url,
        plain.body.error.data.url,
        'a call while the link is live hands out the same link (issue 45 item 6)',
      );

      assert.equal(await connectInBrowser(elicitation.params.url, 'carol-at-crm'), 'Connected to crm');
      assert.deepEqual(
        lastAskedScopes(),
        ['offline_access', 'read', 'write'],
        'the union of what was asked and what the 403 asked',
      );

      const reached = upstream.scopes.length;
      const retry = await mcp('carol', 'crm__note', {
        _meta: URL_ELICITATION,
        requestState: refused.body.result.requestState,
        inputResponses: { [key]: { action: 'accept' } },
      });
      assert.equal(retry.body.result?.content?.[0].text, 'note done', JSON.stringify(retry.body));
      assert.equal(upstream.scopes.length, reached + 1, 'the retry reached crm’s tool once');
      const granted = upstream.scopes.at(-1)!.split(' ');
      assert.ok(
        granted.includes('read') && granted.includes('write'),
        `the retry carried the stepped-up token: ${upstream.scopes.at(-1)}`,
      );
      assert.equal(
        (await mcp('carol', 'crm__read')).body.result?.content?.[0].text,
        'read done',
        'earlier permissions kept',
      );
    },
  );

  test(
    'on /mcp, crm__stubborn, refused again for a scope already asked for, is an error naming it, never ' +
      'another link',
    async () => {
      await connectWithRead('dave');
      // The first refusal asks for write, which the token was not asked for: a step-up, as on crm's own endpoint.
      const first = await mcp('dave', 'crm__stubborn');
      assert.equal(first.body.error?.code, -32042, JSON.stringify(first.body));
      assert.equal(await connectInBrowser(first.body.error.data.url, 'dave-at-crm'), 'Connected to crm');
      assert.deepEqual(lastAskedScopes(), ['offline_access', 'read', 'write']);

      const reached = upstream.scopes.length;
      for (const extra of [{}, { _meta: URL_ELICITATION }]) {
        const answer = await mcp('dave', 'crm__stubborn', extra);
        assert.equal(answer.body.error?.data?.reason, 'insufficient_scope', JSON.stringify(answer.body));
        assert.notEqual(answer.body.error.code, -32042);
        assert.match(answer.body.error.message, /Upstream 'crm' refused tools\/call for want of scope "write"/);
        assert.deepEqual(answer.body.error.data.scopes, ['write']);
        assert.equal(answer.body.error.data.url, undefined, 'no link: asking again would loop');
        assert.doesNotMatch(JSON.stringify(answer.body), /\/connect\//);
      }
      assert.equal(upstream.scopes.length, reached, 'crm’s stubborn tool never ran');
      // The stored token is still good for what it was granted (write included): the control for "refused".
      assert.equal((await mcp('dave', 'crm__note')).body.result?.content?.[0].text, 'note done');
    },
  );
});
