// A perCaller stdio server that takes each caller's OAuth token into its child's environment
// (servers.<name>.credentials { type: oauth, env, issuer, resource }, issue 34), with real parts:
// oidc-provider as the authorization server the config names (authorization code + PKCE, refresh tokens,
// JWT access tokens bound to the configured resource), headless Chromium doing what a person does with the
// connect link, and a fixture child that tells its pid and the token in its environment. alice connects
// through the JSON-RPC error's link, bob through URL-mode elicitation; each child holds its own caller's
// token only; revoking stops the child; an expired token is refreshed and the next call runs on a new
// child with the new token while a call in flight on the old one finishes there.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { decodeJwt } from 'jose';
import type { RunningGateway } from '../../src/gateway.js';
import { createLogger } from '../../infra/logger.js';
import type { Oidc } from '../fixtures/oidc.js';
import { chromium } from '../services.js';
import { tempDir } from '../temp.js';
import { childrenHoldingVariable } from '../processes.js';
import { META, ROOT, until } from './harness.js';
import { callToolAs, startOAuthRig, type OAuthRig } from './oauth-rig.js';

const browserNeed = await chromium('the connect flow of a per-caller OAuth child in headless Chromium');
const KEYS: Record<string, string> = { alice: 'alice-api-key-0123456789abcdef', bob: 'bob-api-key-0123456789abcdefgh' };
const CLIENT = { client_id: 'gw-child', client_secret: 'gw-child-secret-0123456789' };
const RESOURCE = 'https://api.example.test';
const VARIABLE = 'GITHUB_TOKEN';
const dir = tempDir('mcp-gw-per-caller-oauth-');

interface Said {
  pid: number;
  token: string | null;
}

describe('per-caller children with their caller’s OAuth token', { skip: browserNeed.skip }, () => {
  let rig: OAuthRig<undefined>;
  let oidc: Oidc;
  let gateway: RunningGateway;
  let publicUrl: string;
  const logLines: string[] = [];
  /** Every token a child said it held. */
  const seen = new Set<string>();

  before(async () => {
    browserNeed.check();
    const sink = new Writable({
      write(chunk, _encoding, done) {
        logLines.push(String(chunk));
        done();
      },
    });
    rig = await startOAuthRig({
      browserPath: browserNeed.path!,
      client: CLIENT,
      config: (at) => ({
        auth: { apiKeys: Object.entries(KEYS).map(([principal, key]) => ({ key, principal })) },
        credentials: {
          key: 'a-test-credentials-key-of-32-bytes-or-more',
          store: 'file',
          file: path.join(dir, 'credentials.json'),
        },
        servers: {
          github: {
            command: process.execPath,
            args: ['test/fixtures/token-env-server.mjs', VARIABLE],
            cwd: ROOT,
            era: 'modern',
            perCaller: true,
            credentials: {
              type: 'oauth',
              clientId: CLIENT.client_id,
              clientSecret: CLIENT.client_secret,
              scopes: ['read'],
              env: VARIABLE,
              issuer: at.oidc.issuer,
              resource: RESOURCE,
            },
          },
        },
      }),
      log: createLogger('debug', sink),
      server: 'github',
    });
    ({ oidc, gateway, publicUrl } = rig);
  });

  after(() => rig?.close());

  const call = (who: string, name: string, args: Record<string, unknown> = {}, params: Record<string, unknown> = {}) =>
    callToolAs(`${gateway.url}/servers/github/mcp`, KEYS[who]!, name, { arguments: args, ...params });

  /** What the child said: its pid and its token (remembered, for the search of logs at the end). */
  function said(answer: { status: number; body: any }): Said {
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    const text = answer.body.result?.content?.[0]?.text;
    assert.ok(typeof text === 'string', JSON.stringify(answer.body));
    const parsed = JSON.parse(text) as Said;
    if (parsed.token) seen.add(parsed.token);
    return parsed;
  }

  /** Who a token is for and to what resource (decoded only: a token may be expired by the time it is read). */
  function claims(token: string | null): { sub: unknown; aud: unknown } {
    assert.ok(token, 'the child has a token');
    const { sub, aud } = decodeJwt(token);
    return { sub, aud };
  }

  const connectInBrowser = (link: string, login: string) => rig.connectInBrowser(link, login);

  /** The gateway's children whose environment holds the variable, by pid, with its value. */
  function childrenWithToken(): Map<number, string> {
    return childrenHoldingVariable(VARIABLE);
  }

  const alive = (pid: number) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };

  test(
    'alice without a token gets an error carrying the connect link; once connected, her child starts with her ' +
      'token for the configured resource',
    async () => {
      const first = await call('alice', 'token');
      assert.equal(first.body.error?.code, -32042, JSON.stringify(first.body));
      const link: string = first.body.error.data.url;
      assert.ok(link.startsWith(`${publicUrl}/connect/`), link);
      assert.equal(childrenWithToken().size, 0, 'no child before a token');
      assert.equal(await connectInBrowser(link, 'alice-at-gh'), 'Connected to github');
      const alice = said(await call('alice', 'token'));
      assert.deepEqual(claims(alice.token), { sub: 'alice-at-gh', aud: RESOURCE });
      // The token is a real one of the issuer's, for that resource.
      assert.equal((await oidc.verify(alice.token!, RESOURCE)).sub, 'alice-at-gh');
    },
  );

  test(
    'bob connects through URL-mode elicitation; ' + 'each child holds its own caller’s token and not the other’s',
    async () => {
      const capabilities = {
        _meta: { ...META, 'io.modelcontextprotocol/clientCapabilities': { elicitation: { url: {} } } },
      };
      const first = await call('bob', 'token', {}, capabilities);
      assert.equal(first.body.result?.resultType, 'input_required', JSON.stringify(first.body));
      const [key, asked] = Object.entries(
        first.body.result.inputRequests as Record<string, { method: string; params: { mode: string; url: string } }>,
      )[0]!;
      assert.equal(asked.params.mode, 'url');
      assert.equal(await connectInBrowser(asked.params.url, 'bob-at-gh'), 'Connected to github');
      const bob = said(
        await call(
          'bob',
          'token',
          {},
          {
            ...capabilities,
            requestState: first.body.result.requestState,
            inputResponses: { [key]: { action: 'accept' } },
          },
        ),
      );
      assert.equal(claims(bob.token).sub, 'bob-at-gh');
      const alice = said(await call('alice', 'token'));
      assert.equal(claims(alice.token).sub, 'alice-at-gh');
      assert.notEqual(alice.pid, bob.pid, 'a child each');
      assert.notEqual(alice.token, bob.token);
      const children = childrenWithToken();
      assert.deepEqual(
        [...children].sort(([a], [b]) => a - b),
        [
          [alice.pid, alice.token],
          [bob.pid, bob.token],
        ].sort(([a], [b]) => Number(a) - Number(b)),
        'two children, each with its own caller’s token and no other',
      );
    },
  );

  test('revoking the connection stops that caller’s child (no call needed); the other’s runs on', async () => {
    const bob = said(await call('bob', 'token'));
    const alice = said(await call('alice', 'token'));
    const revoked = await fetch(`${gateway.url}/connections/github`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${KEYS.bob}` },
    });
    assert.equal(revoked.status, 200);
    assert.ok(await until(() => !alive(bob.pid), 10_000), "bob's child stopped");
    assert.equal((await call('bob', 'token')).body.error?.code, -32042, 'bob is asked to connect again');
    assert.equal(said(await call('alice', 'token')).pid, alice.pid, "alice's child is untouched");
  });

  test(
    'an expired token is refreshed before the next call, which runs on a new child with the new token; a call in ' +
      'flight finishes on the old child',
    async () => {
      // Tokens issued from now on are inside the refresh margin at once: each call refreshes first.
      oidc.setAccessTokenTtl(1);
      try {
        await fetch(`${gateway.url}/connections/github`, {
          method: 'DELETE',
          headers: { authorization: `Bearer ${KEYS.alice}` },
        });
        const link: string = (await call('alice', 'token')).body.error.data.url;
        assert.equal(await connectInBrowser(link, 'alice-at-gh'), 'Connected to github');
        const release = path.join(dir, 'release');
        const held = call('alice', 'wait', { file: release });
        assert.ok(await until(() => existsSync(`${release}.started`), 30_000), 'the held call reached a child');
        const oldPid = Number(readFileSync(`${release}.started`, 'utf8'));
        assert.ok(oldPid > 0, `the child wrote its pid (${oldPid})`);
        const oldToken = childrenWithToken().get(oldPid);
        assert.ok(oldToken, 'the old child holds a token');
        const next = said(await call('alice', 'token'));
        assert.notEqual(next.pid, oldPid, 'the next call runs on a new child');
        assert.notEqual(next.token, oldToken, 'with the refreshed token');
        assert.equal(claims(next.token).sub, 'alice-at-gh');
        assert.ok(alive(oldPid), 'the old child still runs the call in flight');
        writeFileSync(release, '');
        const finished = said(await held);
        assert.equal(finished.pid, oldPid, 'the call in flight finished on the old child');
        assert.equal(finished.token, oldToken, 'with the token it started with');
        assert.ok(await until(() => !alive(oldPid), 10_000), 'the old child stops once its call is answered');
      } finally {
        oidc.setAccessTokenTtl(3600);
      }
    },
  );

  test('no token in the logs', async () => {
    const all = logLines.join('');
    assert.ok(all.length > 0 && seen.size >= 3, 'something was logged, and tokens were seen');
    for (const token of seen) assert.ok(!all.includes(token), 'a token reached the log');
    assert.ok(!all.includes(CLIENT.client_secret), 'the client secret reached the log');
  });
});
