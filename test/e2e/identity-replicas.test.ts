// Issue 45's "Done when" for identity across replicas: three gateways behind HAProxy (round robin, no
// stickiness) share only Redis (credentials.store: redis) and credentials.key. Alice, who never listed, gets the
// connect link from a call of crm__whoami; she connects in a real browser through the balancer (each step may
// land on another replica); her next calls land on every replica and reach the upstream with her token, never
// "Unknown tool"; a revocation on one replica stops her on all; and the same after all three restart.
// HAProxy names the replica that answered in a response header of its own (x-replica), so the test learns
// where a call landed from the balancer, not from the gateway it checks. Heavy: it runs in the "alone" pass.
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { silentLog } from '../../infra/log.js';
import { type IdentityServer, startIdentityServer } from '../fixtures/identity-server.js';
import { onFreePort, unusedPort } from '../ports.js';
import { chromium, dropRedisKeys, haproxyBinary, sharedRedis } from '../services.js';
import { startHaproxy } from './haproxy-process.js';
import { request, send, until } from './harness.js';
import { type OAuthRig, startOAuthRig } from './oauth-rig.js';

const browserNeed = await chromium('identity across replicas behind HAProxy');
const redisNeed = await sharedRedis('identity across replicas behind HAProxy');
const haproxyNeed = haproxyBinary('identity across replicas behind HAProxy');
const skip = browserNeed.skip || redisNeed.skip || haproxyNeed.skip;
const KEY = 'alice-api-key-0123456789abcdef';
const REPLICAS = ['a', 'b', 'c'] as const;

/** Round robin over the replicas, no stickiness; each answer names the replica that gave it. */
function haproxyConfig(front: number, backends: number[]): string {
  return [
    'defaults',
    '    mode http',
    '    timeout connect 3s',
    '    timeout client 60s',
    '    timeout server 60s',
    // A replica that is restarting refuses the connection: the request goes to another (nothing was sent).
    '    retries 3',
    '    option redispatch',
    '    retry-on conn-failure',
    'frontend mcp',
    `    bind 127.0.0.1:${front}`,
    '    default_backend gateways',
    'backend gateways',
    '    balance roundrobin',
    '    option httpchk GET /readyz',
    '    http-check expect status 200',
    '    default-server check inter 300ms fall 2 rise 1',
    ...backends.map((port, i) => `    server ${REPLICAS[i]} 127.0.0.1:${port}`),
    '    http-response set-header x-replica %s',
    '',
  ].join('\n');
}

/** HAProxy on `front`, once it answers there (503 while no replica is up); PortTaken when it cannot bind. */
async function startBalancer(dir: string, front: number, backends: number[]): Promise<ChildProcess> {
  const file = path.join(dir, `haproxy-${front}.cfg`);
  const answering = () => fetch(`http://127.0.0.1:${front}/readyz`);
  return (await startHaproxy(file, haproxyConfig(front, backends), front, answering)).process;
}

interface Served {
  replica: string;
  body: any;
}

describe('identity across three replicas behind HAProxy', { skip }, () => {
  let rig: OAuthRig<IdentityServer>;
  let haproxy: ChildProcess | undefined;
  let front = '';
  const dir = mkdtempSync(path.join(tmpdir(), 'identity-replicas-'));
  const keyPrefix = `test-identity-replicas-${randomUUID()}:`;
  const client = { client_id: 'gw-identity', client_secret: 'gw-identity-secret-0123456789' };
  /** Every answer to a call through the balancer, in order. */
  const served: Served[] = [];

  before(async () => {
    browserNeed.check();
    redisNeed.check();
    haproxyNeed.check();
    // The balancer comes first: its address is the replicas' public URL, which the provider's client names.
    const ports = [await unusedPort(), await unusedPort(), await unusedPort()];
    const started = await onFreePort(async (port) => ({ port, process: await startBalancer(dir, port, ports) }));
    haproxy = started.process;
    front = `http://127.0.0.1:${started.port}`;
    rig = await startOAuthRig({
      browserPath: browserNeed.path!,
      client,
      upstream: startIdentityServer,
      replicas: 3,
      ports,
      publicUrl: front,
      config: (at) => ({
        auth: { apiKeys: [{ key: KEY, principal: 'alice' }] },
        audit: { destination: path.join(dir, 'audit.log') },
        cache: { keyPrefix },
        credentials: { key: 'a-shared-credentials-key-of-32-bytes-or-more', store: 'redis' },
        servers: {
          crm: {
            url: at.upstream.url,
            credentials: { type: 'oauth', clientId: client.client_id, clientSecret: client.client_secret },
          },
        },
      }),
      log: silentLog,
      server: 'crm',
    });
  });

  after(async () => {
    haproxy?.kill('SIGTERM');
    await rig?.close();
    await dropRedisKeys(keyPrefix);
    rmSync(dir, { recursive: true, force: true });
  });

  /** Resolves once the balancer has sent a ready check to each replica (its own checks mark them up). */
  const allReplicasUp = async () => {
    const seen = new Set<string>();
    const up = await until(async () => {
      const answer = await fetch(`${front}/readyz`);
      const replica = answer.headers.get('x-replica');
      if (answer.status === 200 && replica) seen.add(replica);
      return seen.size === REPLICAS.length;
    }, 30_000);
    assert.ok(up, `the balancer reached only ${[...seen].join()}`);
  };

  /** A request as Alice through the balancer's /mcp; which replica answered, and what. */
  const viaFront = async (method: string, params: Record<string, unknown> = {}): Promise<Served> => {
    const answer = await send(`${front}/mcp`, request(method, params), { authorization: `Bearer ${KEY}` });
    const replica = answer.headers.get('x-replica') ?? '(none)';
    assert.ok(REPLICAS.includes(replica as never), `the balancer named the replica: ${replica} ${answer.status}`);
    return { replica, body: answer.body };
  };
  const whoami = async (): Promise<Served> => {
    const answer = await viaFront('tools/call', { name: 'crm__whoami', arguments: {} });
    served.push(answer);
    return answer;
  };
  /**
   * Calls crm__whoami through the balancer until every replica has answered at least `each` calls and the
   * latest answer of each meets `settled` (word of a revocation travels by pub/sub, a moment behind); returns
   * the answers of this round.
   */
  const roundOfCalls = async (settled: (body: any) => boolean, each = 2): Promise<Served[]> => {
    const round: Served[] = [];
    const done = () =>
      REPLICAS.every((replica) => {
        const theirs = round.filter((answer) => answer.replica === replica);
        return theirs.length >= each && settled(theirs.at(-1)!.body);
      });
    assert.ok(
      await until(async () => {
        round.push(await whoami());
        return done();
      }, 30_000),
      `every replica answered as expected: ${JSON.stringify(round.map((a) => [a.replica, a.body]).slice(-6))}`,
    );
    return round;
  };
  const answersAsAlice = (body: any) => body.result?.content?.[0]?.text === 'you are alice-at-crm';
  const offersTheLink = (body: any) => body.error?.code === -32042 && typeof body.error.data?.url === 'string';
  /** The `sub` an access token (a JWT the provider signed) names. */
  const subjectOf = (token: string): unknown =>
    JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString()).sub;

  /** Alice's calls land on all three replicas and each reaches crm as her alone. */
  const assertActsAsAliceEverywhere = async () => {
    const mark = { tokens: rig.upstream.tokens.length, callers: rig.upstream.callers.length };
    const round = await roundOfCalls(answersAsAlice, 3);
    for (const answer of round) assert.ok(answersAsAlice(answer.body), JSON.stringify(answer));
    const sent = rig.upstream.tokens.slice(mark.tokens);
    assert.ok(sent.length >= round.length, 'every call reached crm');
    assert.ok(
      sent.every((token) => subjectOf(token) === 'alice-at-crm'),
      "every request any replica sent crm carried Alice's token",
    );
    assert.deepEqual(new Set(rig.upstream.callers.slice(mark.callers)), new Set(['alice-at-crm']));
    const listed = await viaFront('tools/list');
    const names = (listed.body.result?.tools as { name: string }[] | undefined)?.map((tool) => tool.name) ?? [];
    assert.ok(names.includes('crm__whoami'), `her list holds crm__whoami: ${names.join()}`);
  };

  /** Revoking on replica `index` (directly, not through the balancer) stops her on every replica. */
  const assertRevocationReachesAll = async (index: number) => {
    const revoked = await fetch(`${rig.gateways[index]!.url}/connections/crm`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${KEY}` },
    });
    assert.equal(revoked.status, 200, await revoked.text());
    await roundOfCalls(offersTheLink);
    // Settled: a whole further round answers with the link on every replica, and crm heard of her no more.
    const settledMark = rig.upstream.callers.length;
    const round = await roundOfCalls(offersTheLink);
    for (const answer of round) assert.ok(offersTheLink(answer.body), JSON.stringify(answer));
    assert.equal(rig.upstream.callers.length, settledMark, 'no replica reached crm as her after the word');
  };

  /** A fresh link through the balancer, completed in the browser (each step may land on another replica). */
  const connectThroughFront = async () => {
    const first = await whoami();
    assert.ok(offersTheLink(first.body), `a call without a connection gets the link: ${JSON.stringify(first)}`);
    const link: string = first.body.error.data.url;
    assert.ok(link.startsWith(`${front}/`), `the link names the balancer: ${link}`);
    assert.equal(await rig.connectInBrowser(link, 'alice-at-crm'), 'Connected to crm');
  };

  test('connect through the balancer, act as Alice on every replica, revoke on one, restart all three', async () => {
    await allReplicasUp();
    // Alice has never listed anywhere: every replica offers the link for a tool under crm's prefix.
    await roundOfCalls(offersTheLink, 1);
    await connectThroughFront();
    await assertActsAsAliceEverywhere();
    await assertRevocationReachesAll(2);

    await connectThroughFront();
    for (const index of [0, 1, 2]) await rig.restartGateway(index);
    await allReplicasUp();
    // Fresh processes: nothing listed, nothing cached; what she connected lives in Redis.
    await assertActsAsAliceEverywhere();
    await assertRevocationReachesAll(0);

    const unknown = served.filter((answer) => /unknown tool/i.test(JSON.stringify(answer.body)));
    assert.deepEqual(unknown, [], 'no call of a tool her list holds answered "Unknown tool"');
  });
});
