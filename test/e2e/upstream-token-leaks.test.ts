// Issue 33, "tokens are secrets": with oidc-provider issuing real tokens to the gateway for two principals
// (authorization code + PKCE through headless Chromium, JWT access tokens, refresh tokens used without the
// user, a URL-mode elicitation, a revocation), every access token, refresh token, authorization code, PKCE
// verifier and the client secret is searched for in everything the gateway writes or serves to anyone but
// the upstream: its log (debug), the audit log, the OTLP traces it exports, /metrics, /status.json, the
// status page, /config and /readyz. None may appear. The texts are taken where they are born: the token
// endpoint's answers and requests (oidc-provider's grant.success) and the browser's callback URL.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import type { RunningGateway } from '../../src/gateway.js';
import { createLogger } from '../../infra/logger.js';
import { startIdentityServer, type IdentityServer } from '../fixtures/identity-server.js';
import type { Oidc } from '../fixtures/oidc.js';
import { startOtlpReceiver, type OtlpReceiver } from '../otlp-receiver.js';
import { chromium } from '../services.js';
import { tempDir } from '../temp.js';
import { request, send as sendTo } from './harness.js';
import { startOAuthRig, type OAuthRig } from './oauth-rig.js';

const browserNeed = await chromium('the connect flow in headless Chromium');
const KEYS: Record<string, string> = {
  alice: 'alice-api-key-0123456789abcdef',
  bob: 'bob-api-key-0123456789abcdefgh',
  op: 'operator-key-0123456789abcdefgh',
};
const URL_ELICITATION = { 'io.modelcontextprotocol/clientCapabilities': { elicitation: { url: {} } } };

/** A secret the gateway handled, and where it came from (for the failure message). */
interface Secret {
  kind: string;
  text: string;
}

/**
 * The pieces of a secret to look for: the whole text, and for a JWT its signature and its payload, since a
 * JWT's header is the same for every token and proves nothing, while either other part is the token's own.
 */
function needles(secret: Secret): string[] {
  const parts = secret.text.split('.');
  return parts.length === 3 ? [secret.text, parts[1]!, parts[2]!] : [secret.text];
}

/** Each secret found in `haystack`, named by kind and place; empty when there is none. */
export function leaks(secrets: readonly Secret[], place: string, haystack: string): string[] {
  const found: string[] = [];
  for (const secret of secrets)
    for (const needle of needles(secret)) if (haystack.includes(needle)) found.push(`${secret.kind} in ${place}`);
  return found;
}

describe('no upstream token, code, verifier or client secret in anything the gateway writes or serves', {
  skip: browserNeed.skip,
}, () => {
  let rig: OAuthRig<IdentityServer>;
  let oidc: Oidc;
  let upstream: IdentityServer;
  let gateway: RunningGateway;
  let receiver: OtlpReceiver;
  const dir = tempDir('upstream-token-leaks-');
  const auditFile = path.join(dir, 'audit.log');
  const storeFile = path.join(dir, 'credentials.json');
  const logLines: string[] = [];
  const client = { client_id: 'gw-leaks', client_secret: 'gw-leaks-client-secret-0123456789' };
  const secrets: Secret[] = [{ kind: 'the client secret', text: client.client_secret }];
  /** What the gateway serves to an operator (and so to anyone allowed /, /status.json, /metrics, /config). */
  const served: Record<string, string> = {};

  const sink = new Writable({
    write(chunk, _encoding, done) {
      logLines.push(String(chunk));
      done();
    },
  });

  before(async () => {
    browserNeed.check();
    receiver = await startOtlpReceiver();
    rig = await startOAuthRig({
      browserPath: browserNeed.path!,
      client,
      upstream: startIdentityServer,
      config: (at) => ({
        log: { level: 'debug' },
        auth: {
          apiKeys: Object.entries(KEYS).map(([principal, key]) => ({ key, principal })),
          operators: { ids: ['op'] },
        },
        audit: { destination: auditFile },
        telemetry: { traces: { endpoint: receiver.url, protocol: 'http/json', sampler: 'always_on' } },
        credentials: { key: 'an-upstream-token-leaks-key-of-32-bytes-or-more', store: 'file', file: storeFile },
        servers: {
          crm: {
            url: at.upstream.url,
            credentials: { type: 'oauth', clientId: client.client_id, clientSecret: client.client_secret },
          },
        },
      }),
      log: createLogger('debug', sink),
      server: 'crm',
    });
    ({ oidc, upstream, gateway } = rig);
    // Every token the token endpoint hands out, and every code and verifier it is given.
    oidc.provider.on(
      'grant.success',
      (ctx: { body?: Record<string, unknown>; oidc: { params?: Record<string, unknown> } }) => {
        for (const kind of ['access_token', 'refresh_token', 'id_token'] as const) {
          const text = ctx.body?.[kind];
          if (typeof text === 'string') secrets.push({ kind, text });
        }
        for (const kind of ['code', 'code_verifier', 'refresh_token'] as const) {
          const text = ctx.oidc.params?.[kind];
          if (typeof text === 'string') secrets.push({ kind: `${kind} (sent)`, text });
        }
      },
    );
    await driveCallsForTwoPrincipals();
    for (const page of ['/', '/status.json', '/metrics', '/config', '/readyz']) {
      const response = await fetch(`${gateway.url}${page}`, { headers: { authorization: `Bearer ${KEYS.op}` } });
      assert.equal(response.status, 200, page);
      served[page] = await response.text();
    }
    await gateway.close(); // exports the spans the batch processor holds, and finishes the audit and store files
  });

  after(async () => {
    await rig?.close();
    await receiver?.close();
  });

  const send = (who: string, endpoint: string, body: ReturnType<typeof request>) =>
    sendTo(`${gateway.url}${endpoint}`, body, { authorization: `Bearer ${KEYS[who]}` });
  const whoami = (who: string, endpoint = '/servers/crm/mcp', extra: Record<string, unknown> = {}) =>
    send(
      who,
      endpoint,
      request('tools/call', { name: endpoint === '/mcp' ? 'crm__whoami' : 'whoami', arguments: {}, ...extra }),
    );

  /** The authorization code the browser carries back to the callback is kept. */
  const keepCallbackCode = (page: Page) =>
    page.on('request', (sent) => {
      const url = new URL(sent.url());
      const code = url.pathname === '/connect/callback' ? url.searchParams.get('code') : null;
      if (code) secrets.push({ kind: 'authorization code (callback)', text: code });
    });
  const connectInBrowser = (link: string, login: string) => rig.connectInBrowser(link, login, keepCallbackCode);

  async function driveCallsForTwoPrincipals(): Promise<void> {
    // alice: the error's link, connected, calls on both endpoints.
    const link: string = (await whoami('alice')).body.error.data.url;
    assert.equal(await connectInBrowser(link, 'alice-at-crm'), 'Connected to crm');
    assert.equal((await whoami('alice')).body.result?.content[0].text, 'you are alice-at-crm');
    assert.ok(
      (await send('alice', '/mcp', request('tools/list'))).body.result.tools.some(
        (t: { name: string }) => t.name === 'crm__whoami',
      ),
    );
    assert.equal((await whoami('alice', '/mcp')).body.result?.content[0].text, 'you are alice-at-crm');

    // bob: the placeholder on /mcp, URL-mode elicitation, the retry; his tokens are due at once, so every
    // call of his refreshes (a refresh token sent, new tokens back). 2 s, not 1: a JWT's exp is in whole seconds,
    // and a 1 s token could reach the upstream already expired.
    oidc.setAccessTokenTtl(2);
    try {
      const asked = await send(
        'bob',
        '/mcp',
        request('tools/call', { name: 'crm__connect', arguments: {}, _meta: URL_ELICITATION }),
      );
      assert.equal(asked.body.result?.resultType, 'input_required', JSON.stringify(asked.body));
      const [key, question] = Object.entries(asked.body.result.inputRequests)[0] as [
        string,
        { params: { url: string } },
      ];
      assert.equal(await connectInBrowser(question.params.url, 'bob-at-crm'), 'Connected to crm');
      const retry = request('tools/call', {
        name: 'crm__connect',
        arguments: {},
        _meta: URL_ELICITATION,
        requestState: asked.body.result.requestState,
        inputResponses: { [key]: { action: 'accept' } },
      });
      assert.ok((await send('bob', '/mcp', retry)).body.result, 'the retry is answered');
      for (let i = 0; i < 2; i++)
        assert.equal((await whoami('bob', '/mcp')).body.result?.content[0].text, 'you are bob-at-crm');
    } finally {
      oidc.setAccessTokenTtl(3600);
    }
    assert.equal((await whoami('bob')).body.result?.content[0].text, 'you are bob-at-crm');

    // alice lists her connections and revokes; her next call asks her to connect again.
    const listed = await fetch(`${gateway.url}/connections`, { headers: { authorization: `Bearer ${KEYS.alice}` } });
    served['/connections (alice)'] = await listed.text();
    assert.equal(
      (
        await fetch(`${gateway.url}/connections/crm`, {
          method: 'DELETE',
          headers: { authorization: `Bearer ${KEYS.alice}` },
        })
      ).status,
      200,
    );
    assert.equal((await whoami('alice')).body.error?.code, -32042);
  }

  test('the secrets were really handled: tokens issued, refreshed and sent, codes and verifiers exchanged', () => {
    const kinds = new Set(secrets.map((s) => s.kind));
    for (const kind of [
      'access_token',
      'refresh_token',
      'refresh_token (sent)',
      'code (sent)',
      'code_verifier (sent)',
      'authorization code (callback)',
    ])
      assert.ok(kinds.has(kind), `no ${kind} was seen`);
    // Every token the upstream received is one the token endpoint issued (so all of them are searched for).
    const issued = new Set(secrets.filter((s) => s.kind === 'access_token').map((s) => s.text));
    assert.ok(upstream.tokens.length >= 6, `${upstream.tokens.length} tokens reached the upstream`);
    for (const token of upstream.tokens)
      assert.ok(issued.has(token), 'the upstream got a token the token endpoint did not issue');
    // The search itself finds what it looks for (a JWT's signature alone counts).
    const jwt = upstream.tokens[0]!;
    assert.deepEqual(leaks([{ kind: 'probe', text: jwt }], 'a probe', `… ${jwt.split('.')[2]} …`), [
      'probe in a probe',
    ]);
  });

  test('none in the log, the audit log or the exported traces', () => {
    assert.ok(logLines.join('').includes('a caller connected their account'), 'the log was written while connecting');
    const audit = readFileSync(auditFile, 'utf8');
    assert.ok(audit.includes('"principal":"bob"'), 'the audit log was written');
    assert.ok(
      receiver.spans.some((s) => s.kind === 3),
      'the hop spans were exported',
    );
    const found = [
      ...leaks(secrets, 'the log', logLines.join('')),
      ...leaks(secrets, 'the audit log', audit),
      ...leaks(secrets, 'the traces', JSON.stringify(receiver.spans)),
    ];
    assert.deepEqual(found, []);
  });

  test('none in /metrics, /status.json, the status page, /config, /readyz or a caller’s /connections', () => {
    assert.match(served['/metrics']!, /mcp_gateway_/);
    assert.equal(JSON.parse(served['/status.json']!).upstreams[0].connected, 1, 'bob is connected, alice revoked');
    const found = Object.entries(served).flatMap(([place, text]) => leaks(secrets, place, text));
    assert.deepEqual(found, []);
  });

  test('none at rest: the store file holds them sealed', () => {
    assert.deepEqual(leaks(secrets, 'the store file', readFileSync(storeFile, 'utf8')), []);
  });
});
