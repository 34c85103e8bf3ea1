// Issue 33: until a caller connects a server that needs their own account (credentials type: oauth), /mcp
// and the profiles over it show them one tool for that server, `crm__connect`, instead of hiding it; its
// call starts the connect flow (the error with data.url, or URL-mode elicitation); once connected, the
// placeholder goes, the server's own tools appear, and that caller's listen stream — only theirs — hears
// tools/list_changed. Real parts: oidc-provider as the authorization server, an SDK v2 server that accepts
// only its own audience, headless Chromium doing the person's part.
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { RunningGateway } from '../../src/gateway.js';
import { silentLog } from '../../infra/log.js';
import { startIdentityServer, type IdentityServer } from '../fixtures/identity-server.js';
import { chromium } from '../services.js';
import { tempDir } from '../temp.js';
import { eventually, fixture, headersFor, openListen, post, request, schemaProblems } from './harness.js';
import { callToolAs, startOAuthRig, type OAuthRig } from './oauth-rig.js';

const browserNeed = await chromium('the connect flow in headless Chromium');
const KEYS: Record<string, string> = {
  alice: 'alice-api-key-0123456789abcdef',
  bob: 'bob-api-key-0123456789abcdefgh',
  op: 'operator-api-key-0123456789abcd',
};
const URL_ELICITATION = { 'io.modelcontextprotocol/clientCapabilities': { elicitation: { url: {} } } };

describe('a connect placeholder stands in for a server the caller has not connected', {
  skip: browserNeed.skip,
}, () => {
  let rig: OAuthRig<IdentityServer>;
  let upstream: IdentityServer;
  let gateway: RunningGateway;
  let publicUrl: string;
  const client = { client_id: 'gw-placeholder', client_secret: 'gw-placeholder-secret-0123456789' };

  before(async () => {
    browserNeed.check();
    rig = await startOAuthRig({
      browserPath: browserNeed.path!,
      client,
      upstream: startIdentityServer,
      config: (at) => ({
        auth: {
          apiKeys: Object.entries(KEYS).map(([principal, key]) => ({ key, principal })),
          operators: { ids: ['op'] },
        },
        credentials: {
          key: 'a-connect-placeholder-key-of-32-bytes-or-more',
          store: 'file',
          file: path.join(tempDir('connect-placeholder-'), 'credentials.json'),
        },
        servers: {
          local: fixture('modern-server'),
          crm: {
            url: at.upstream.url,
            credentials: { type: 'oauth', clientId: client.client_id, clientSecret: client.client_secret },
          },
        },
        profiles: { sales: { tools: ['crm__*'] } },
      }),
      log: silentLog,
      server: 'crm',
    });
    ({ upstream, gateway, publicUrl } = rig);
  });

  after(() => rig?.close());

  const as = (who: string, body: { method: string; params?: Record<string, unknown> }) => ({
    ...headersFor(body),
    authorization: `Bearer ${KEYS[who]}`,
  });
  const toolsOf = async (who: string, endpoint = '/mcp') => {
    const body = request('tools/list');
    const answer = await post(`${gateway.url}${endpoint}`, body, as(who, body));
    assert.ok(answer.body.result, JSON.stringify(answer.body));
    return answer.body.result.tools as { name: string; description?: string; _meta?: Record<string, unknown> }[];
  };
  const call = (who: string, name: string, extra: Record<string, unknown> = {}, endpoint = '/mcp') =>
    callToolAs(`${gateway.url}${endpoint}`, KEYS[who]!, name, extra);

  const connectInBrowser = (link: string, login: string) => rig.connectInBrowser(link, login);

  test(
    'before connecting: one crm tool that says what it is for, beside the other servers’ tools, on /mcp and the ' +
      'profile',
    async () => {
      const before = upstream.tokens.length + upstream.refused;
      const tools = await toolsOf('alice');
      const names = tools.map((t) => t.name);
      assert.ok(names.includes('local__echo'), names.join());
      const crm = tools.filter((t) => t.name.startsWith('crm__'));
      assert.deepEqual(
        crm.map((t) => t.name),
        ['crm__connect'],
      );
      assert.match(crm[0]!.description!, /Connects your own crm account/);
      assert.equal(crm[0]!._meta?.['mcp-gateway/connects'], 'crm');
      const body = request('tools/list');
      assert.deepEqual(
        schemaProblems('tools/list', (await post(`${gateway.url}/mcp`, body, as('alice', body))).body),
        [],
      );
      // Listing asked nothing of the upstream (there is nobody to ask as).
      assert.equal(upstream.tokens.length + upstream.refused, before);
      assert.deepEqual(
        (await toolsOf('alice', '/profiles/sales/mcp')).map((t) => t.name),
        ['crm__connect'],
      );
    },
  );

  test(
    'its call starts the connect flow: the error with data.url, or URL-mode elicitation for a client that ' +
      'declared it',
    async () => {
      const plain = await call('alice', 'crm__connect');
      assert.equal(plain.body.error?.code, -32042, JSON.stringify(plain.body));
      assert.ok(plain.body.error.data.url.startsWith(`${publicUrl}/connect/`));
      const elicited = await call('alice', 'crm__connect', { _meta: URL_ELICITATION });
      assert.equal(elicited.body.result?.resultType, 'input_required', JSON.stringify(elicited.body));
      const [question] = Object.values(elicited.body.result.inputRequests) as {
        params: { mode: string; url: string };
      }[];
      assert.equal(question?.params.mode, 'url');
      assert.ok(question?.params.url.startsWith(`${publicUrl}/connect/`));
      // Through the profile too.
      assert.equal((await call('alice', 'crm__connect', {}, '/profiles/sales/mcp')).body.error?.code, -32042);
    },
  );

  test(
    'after connecting: ' + "the placeholder goes, crm's tools appear, and only that caller's listen stream hears it",
    async () => {
      const aliceStream = await openListen(
        `${gateway.url}/mcp`,
        { toolsListChanged: true },
        { authorization: `Bearer ${KEYS.alice}` },
      );
      const bobStream = await openListen(
        `${gateway.url}/mcp`,
        { toolsListChanged: true },
        { authorization: `Bearer ${KEYS.bob}` },
      );
      try {
        // acknowledged
        await eventually(() => aliceStream.messages.length >= 1 && bobStream.messages.length >= 1, 10_000);
        // bob's list (with his placeholder) is kept for him; it must not become hers, nor hers his.
        assert.deepEqual(
          (await toolsOf('bob')).filter((t) => t.name.startsWith('crm__')).map((t) => t.name),
          ['crm__connect'],
        );
        const link: string = (await call('alice', 'crm__connect')).body.error.data.url;
        assert.equal(await connectInBrowser(link, 'alice-at-crm'), 'Connected to crm');
        const changed = (stream: { messages: { method?: string }[] }) =>
          stream.messages.filter((m) => m.method === 'notifications/tools/list_changed');
        await eventually(() => changed(aliceStream).length === 1, 10_000);
        assert.equal(
          changed(aliceStream)[0] &&
            (changed(aliceStream)[0] as any).params?._meta?.['io.modelcontextprotocol/subscriptionId'],
          aliceStream.id,
        );

        const names = (await toolsOf('alice')).map((t) => t.name);
        assert.ok(names.includes('crm__whoami') && names.includes('local__echo'), names.join());
        assert.ok(!names.includes('crm__connect'), names.join());
        assert.equal((await call('alice', 'crm__whoami')).body.result?.content[0].text, 'you are alice-at-crm');
        assert.deepEqual(
          (await toolsOf('bob')).filter((t) => t.name.startsWith('crm__')).map((t) => t.name),
          ['crm__connect'],
        );
        // A stale placeholder called after connecting is answered by the gateway, and nothing reaches crm.
        const seen = upstream.callers.length;
        const stale = await call('alice', 'crm__connect');
        assert.match(stale.body.result?.content[0].text, /You are connected to crm/);
        assert.equal(upstream.callers.length, seen);

        // The control for bob's stream: his own connection is the first list change it hears.
        const bobLink: string = (await call('bob', 'crm__connect')).body.error.data.url;
        assert.equal(await connectInBrowser(bobLink, 'bob-at-crm'), 'Connected to crm');
        await eventually(() => changed(bobStream).length >= 1, 10_000);
        assert.equal(changed(bobStream).length, 1, "bob's stream heard alice's connection");
        assert.equal(changed(aliceStream).length, 1, "alice's stream heard bob's connection");
        assert.equal((await call('bob', 'crm__whoami')).body.result?.content[0].text, 'you are bob-at-crm');

        // Revoked: the placeholder is back for her, and her stream hears it.
        const revoked = await fetch(`${gateway.url}/connections/crm`, {
          method: 'DELETE',
          headers: { authorization: `Bearer ${KEYS.alice}` },
        });
        assert.equal(revoked.status, 200);
        await eventually(() => changed(aliceStream).length === 2, 10_000);
        assert.deepEqual(
          (await toolsOf('alice')).filter((t) => t.name.startsWith('crm__')).map((t) => t.name),
          ['crm__connect'],
        );
        assert.ok((await toolsOf('bob')).some((t) => t.name === 'crm__whoami'));
      } finally {
        aliceStream.close();
        bobStream.close();
      }
    },
  );

  test('the status page and /status.json count who has connected each such server, never who', async () => {
    const asOperator = { authorization: `Bearer ${KEYS.op}` };
    const status = await fetch(`${gateway.url}/status.json`, { headers: asOperator });
    const text = await status.text();
    const upstreams = JSON.parse(text).upstreams as { name: string; connected?: number; toolCount?: number }[];
    const crm = upstreams.find((u) => u.name === 'crm')!;
    assert.equal(crm.connected, 1, text); // bob; alice revoked
    assert.equal(crm.toolCount, 1, 'whoami; the placeholder is not one of its tools');
    assert.equal(
      upstreams.find((u) => u.name === 'local')!.connected,
      undefined,
      'a server with static headers has nobody connected',
    );
    for (const name of ['alice', 'bob']) assert.ok(!text.includes(name), `${name} is named in /status.json`);
    const page = await (await fetch(`${gateway.url}/`, { headers: asOperator })).text();
    assert.match(page, /<tr data-upstream="crm"[^>]*>.*<td data-field="connected">1<\/td>/);
    // Not an operator: neither the page nor its data.
    assert.equal(
      (await fetch(`${gateway.url}/status.json`, { headers: { authorization: `Bearer ${KEYS.alice}` } })).status,
      403,
    );
    assert.equal((await fetch(`${gateway.url}/`, { headers: { authorization: `Bearer ${KEYS.alice}` } })).status, 403);
  });
});
