// servers.<name>.credentials type: tokenExchange (issue 33), end to end with real parts: oidc-provider as
// the authorization server (token exchange registered as a grant, JWT access tokens bound to a resource),
// an SDK v2 server over HTTP that accepts only tokens issued for its own URL and says who called, and the
// gateway verifying callers' JWTs (auth.jwt) against the same issuer. Each caller reaches the server as
// themselves; an exchanged token is reused until shortly before it expires; token text never reaches the
// gateway's logs.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parseConfig } from '../../src/config/config.js';
import { startGateway, type RunningGateway } from '../../src/gateway.js';
import { startIdentityServer, type IdentityServer } from '../fixtures/identity-server.js';
import { startOidc, type Oidc } from '../fixtures/oidc.js';
import { tempDir } from '../temp.js';
import { request, ROOT, send } from './harness.js';
import { writtenLog } from '../recording-log.js';

const GATEWAY_RESOURCE = 'http://gateway.test/mcp';
const CLIENT = { client_id: 'gw', client_secret: 'gw-secret-0123456789abcdef' };
const API_KEY = 'carol-api-key-0123456789abcdef';

describe('token exchange: each caller reaches the upstream as themselves', () => {
  let oidc: Oidc;
  let upstream: IdentityServer;
  let gateway: RunningGateway;
  const written = writtenLog('debug');
  const callerTokens = new Map<string, string>();
  const auditFile = path.join(tempDir('token-exchange-'), 'audit.log');

  const docsServer = () => ({
    url: upstream.url,
    credentials: {
      type: 'tokenExchange',
      tokenEndpoint: oidc.tokenEndpoint,
      clientId: CLIENT.client_id,
      clientSecret: CLIENT.client_secret,
      audience: upstream.url,
    },
  });
  const configWith = (servers: Record<string, unknown>) => ({
    listen: { port: 0 },
    log: { level: 'debug' },
    audit: { destination: auditFile, arguments: true },
    auth: {
      jwt: { issuer: oidc.issuer, jwksUrl: oidc.jwksUrl, audience: GATEWAY_RESOURCE },
      apiKeys: [{ key: API_KEY, principal: 'carol' }],
    },
    servers,
  });

  before(async () => {
    oidc = await startOidc({ clients: [CLIENT], callerAudience: GATEWAY_RESOURCE });
    upstream = await startIdentityServer(oidc.issuer, oidc.jwksUrl);
    for (const who of ['alice', 'bob']) callerTokens.set(who, await oidc.signCaller(who));
    gateway = await startGateway(parseConfig(configWith({ docs: docsServer() }), 'test', ROOT), written.logger);
  });

  after(async () => {
    await gateway?.close();
    await upstream?.close();
    await oidc?.close();
  });

  const call = (path: string, who: string, body: ReturnType<typeof request>) =>
    send(`${gateway.url}${path}`, body, {
      authorization: who === 'carol' ? `Bearer ${API_KEY}` : `Bearer ${callerTokens.get(who)}`,
    });
  const whoami = (path: string, who: string) =>
    call(path, who, request('tools/call', { name: path === '/mcp' ? 'docs__whoami' : 'whoami', arguments: {} }));

  test("alice and bob each reach the server as themselves, on /mcp and on the server's own endpoint", async () => {
    for (const who of ['alice', 'bob']) {
      const answer = await whoami('/servers/docs/mcp', who);
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      assert.equal(answer.body.result.content[0].text, `you are ${who}`);
    }
    const listed = await call('/mcp', 'alice', request('tools/list'));
    assert.deepEqual(
      listed.body.result.tools.map((tool: { name: string }) => tool.name),
      ['docs__whoami'],
    );
    assert.equal((await whoami('/mcp', 'bob')).body.result.content[0].text, 'you are bob');
    // What reached the server were exchanged tokens for its own URL, never the callers' tokens to the gateway.
    for (const token of upstream.tokens) {
      assert.ok(![...callerTokens.values()].includes(token));
      assert.equal((await oidc.verify(token, upstream.url)).aud, upstream.url);
    }
    assert.ok(
      oidc.exchanges.every((exchange) => exchange.audience === upstream.url && exchange.client === CLIENT.client_id),
    );
  });

  test('an exchanged token is reused until shortly before it expires, then exchanged again', async () => {
    await whoami('/servers/docs/mcp', 'alice');
    const before = oidc.exchanges.filter((e) => e.sub === 'alice').length;
    await whoami('/servers/docs/mcp', 'alice');
    await whoami('/servers/docs/mcp', 'alice');
    assert.equal(oidc.exchanges.filter((e) => e.sub === 'alice').length, before, 'an hour-long token is reused');
    // A token that lives less than renewBeforeMs (30 s) is renewed on every call.
    oidc.setAccessTokenTtl(20);
    try {
      // a new subject token forces a new exchange
      const fresh = await oidc.signCaller('alice', { jti: 'second-login' });
      callerTokens.set('alice', fresh);
      await whoami('/servers/docs/mcp', 'alice');
      const short = oidc.exchanges.filter((e) => e.sub === 'alice').length;
      assert.equal(short, before + 1, 'a caller with a new token gets a new exchange');
      assert.equal((await whoami('/servers/docs/mcp', 'alice')).body.result.content[0].text, 'you are alice');
      assert.equal(
        oidc.exchanges.filter((e) => e.sub === 'alice').length,
        short + 1,
        'a token inside renewBeforeMs of its expiry is exchanged again',
      );
    } finally {
      oidc.setAccessTokenTtl(3600);
    }
  });

  test('a caller who came with an API key has no token to exchange: told so, naming auth.jwt', async () => {
    const answer = await whoami('/servers/docs/mcp', 'carol');
    assert.ok('error' in answer.body, JSON.stringify(answer.body));
    assert.match(answer.body.error.message, /auth\.jwt/);
    assert.ok(!upstream.callers.includes('carol'));
  });

  test('a gateway started without such a server reaches it as each caller once a reload adds it', async () => {
    // Started without per-user credentials, the gateway has not loaded their modules (test/e2e/lazy-modules.test.ts):
    // the reload loads them for the server it adds.
    const local = { command: process.execPath, args: [path.join(ROOT, 'test/fixtures/synthetic-server.mjs')] };
    const later = await startGateway(parseConfig(configWith({ local }), 'test', ROOT), written.logger);
    try {
      await later.reload(parseConfig(configWith({ local, docs: docsServer() }), 'test', ROOT));
      const answer = await send(
        `${later.url}/servers/docs/mcp`,
        request('tools/call', { name: 'whoami', arguments: {} }),
        { authorization: `Bearer ${callerTokens.get('bob')}` },
      );
      assert.equal(answer.body.result?.content[0].text, 'you are bob', JSON.stringify(answer.body));
    } finally {
      await later.close();
    }
  });

  test("no token text in the gateway's logs or audit", async () => {
    assert.ok(written.lines().length > 0, 'the gateway logged at debug');
    const aboveDebug = written.lines().filter((l) => !l.includes('"level":20'));
    if (process.env.SHOW_LOG) console.log(aboveDebug.join('\n'));
    const audit = readFileSync(auditFile, 'utf8');
    assert.match(audit, /"principal":"alice"/);
    const secrets = [...callerTokens.values(), ...upstream.tokens, CLIENT.client_secret, API_KEY];
    assert.ok(secrets.length > 4);
    const all = written.text() + audit;
    for (const secret of secrets) assert.ok(!all.includes(secret), 'a token or secret reached the log');
  });
});
