// node --import tsx bench/capacity.ts: the per-replica figures of docs/deployment.md's capacity model.
//   (1) RSS of the gateway process (VmRSS, children not counted) with 1 and with 10 idle synthetic stdio
//       upstreams: what one more upstream costs;
//   (2) Redis commands per tools/call and per cached tools/list (INFO commandstats before and after N of
//       each), with cache.store: redis, then with a rate limit as well (its buckets live in Redis);
//   (3) tools/call/s at 16 clients in each set-up, one run each: a rough figure for this machine, not a
//       benchmark (npm run bench is that).
// Its own redis-server on a free loopback port, so nobody else's commands are counted. The compiled build,
// as the container runs it. Loopback only; bounded runs. Writes bench/results/capacity.json.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { startGateway } from './aggregate.js';
import { gatewayEntry, removeBuild } from './build.js';
import { httpLoad, type LoadResult } from './load.js';
import { descendants, freePort, rssMb, stopTree, waitFor } from './procs.js';
import { META, mcpHeaders } from './wire.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const N = Number(process.env.CAPACITY_CALLS ?? 10_000);
const SETTLE_MS = 3_000;
const say = (line: string) => process.stdout.write(`${line}\n`);

/** Calls of each Redis command so far (INFO commandstats), by command name. */
async function commandCalls(redis: Redis): Promise<Map<string, number>> {
  const info = await redis.info('commandstats');
  return new Map([...info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)].map((m) => [m[1]!, Number(m[2])]));
}

/** Commands per request between two commandstats readings, less the INFO calls themselves. */
function perRequest(before: Map<string, number>, after: Map<string, number>, requests: number): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [name, calls] of after) {
    const delta = calls - (before.get(name) ?? 0) - (name === 'info' ? 1 : 0);
    if (delta > 0) out[name] = Math.round((delta / requests) * 1000) / 1000;
  }
  return out;
}

const total = (ops: Record<string, number>): number =>
  Math.round(Object.values(ops).reduce((a, b) => a + b, 0) * 1000) / 1000;

function load(url: string, method: 'tools/call' | 'tools/list', calls: number): Promise<LoadResult> {
  const name = 's0__tool-0';
  return httpLoad({
    url,
    headers: mcpHeaders(method, method === 'tools/call' ? name : undefined),
    body: (i) =>
      JSON.stringify({
        jsonrpc: '2.0',
        id: i,
        method,
        params: method === 'tools/call' ? { name, arguments: { text: `c${i}` }, _meta: META } : { _meta: META },
      }),
    check: (text, i) => {
      const response = JSON.parse(text);
      return (
        response.id === i &&
        (method === 'tools/call'
          ? response.result?.content?.[0]?.text === `s0/tool-0: c${i}`
          : Array.isArray(response.result?.tools))
      );
    },
    concurrency: 16,
    total: calls,
    deadlineMs: 180_000,
  });
}

async function startRedis(): Promise<{ child: ChildProcess; url: string }> {
  const port = await freePort();
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: 'ignore' },
  );
  const url = `redis://127.0.0.1:${port}`;
  await waitFor(
    'redis-server',
    async () => {
      const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
      probe.on('error', () => {}); // refused until it listens: that is what is being waited for
      const up = await probe.connect().then(
        () => true,
        () => false,
      );
      probe.disconnect();
      return up;
    },
    10_000,
  );
  return { child, url };
}

interface Setup {
  name: string;
  callsPerSecond: number;
  errors: number;
  redisPerCall?: Record<string, number>;
  redisPerCachedList?: Record<string, number>;
  /** The first tools/list of a fresh key prefix: read, fetch from the upstream, fill. */
  redisPerMiss?: Record<string, number>;
}

async function measure(
  name: string,
  options: Parameters<typeof startGateway>[2],
  redis: Redis | undefined,
): Promise<Setup> {
  const gateway = await startGateway(1, 5, { ...options, entry: gatewayEntry() });
  try {
    // Warm: the child is up, the list cached, the routes known, V8 past its first optimisations.
    const cold = redis && (await commandCalls(redis));
    await load(gateway.url, 'tools/list', 1);
    const warm = redis && (await commandCalls(redis));
    await load(gateway.url, 'tools/call', 2_000);
    const before = redis && (await commandCalls(redis));
    const calls = await load(gateway.url, 'tools/call', N);
    const afterCalls = redis && (await commandCalls(redis));
    await load(gateway.url, 'tools/list', N);
    const afterLists = redis && (await commandCalls(redis));
    const setup: Setup = { name, callsPerSecond: Math.round(calls.callsPerSecond), errors: calls.errors };
    if (before && afterCalls && afterLists) {
      setup.redisPerCall = perRequest(before, afterCalls, N);
      setup.redisPerCachedList = perRequest(afterCalls, afterLists, N);
      setup.redisPerMiss = perRequest(cold!, warm!, 1);
    }
    say(
      `${name}: ${setup.callsPerSecond} tools/call/s at 16 clients (${calls.errors} errors); Redis commands per ` +
        `call ${JSON.stringify(setup.redisPerCall ?? {})}, per cached list ` +
        `${JSON.stringify(setup.redisPerCachedList ?? {})}, for the first list ` +
        `${JSON.stringify(setup.redisPerMiss ?? {})}`,
    );
    return setup;
  } finally {
    await stopTree(gateway.process);
  }
}

/** Idle VmRSS of the gateway process, and the sum of its children's. */
async function idleRss(upstreams: number): Promise<{ gatewayMb: number; childrenMb: number }> {
  const gateway = await startGateway(upstreams, 50, { entry: gatewayEntry() });
  try {
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS)); // start-up garbage settles; no request yet
    const childrenMb = descendants(gateway.process.pid!).reduce((sum, pid) => sum + (rssMb(pid) || 0), 0);
    return { gatewayMb: rssMb(gateway.process.pid!), childrenMb };
  } finally {
    await stopTree(gateway.process);
  }
}

const rss = { one: await idleRss(1), ten: await idleRss(10) };
const perUpstreamMb = (rss.ten.gatewayMb - rss.one.gatewayMb) / 9;
const perChildMb = rss.ten.childrenMb / 10;
say(
  `idle RSS of the gateway: ${rss.one.gatewayMb.toFixed(1)} MB with 1 upstream, ${rss.ten.gatewayMb.toFixed(1)} MB ` +
    `with 10: ${perUpstreamMb.toFixed(2)} MB per upstream; each synthetic stdio child (node) ` +
    `${perChildMb.toFixed(1)} MB of its own`,
);

const { child, url } = await startRedis();
const redis = new Redis(url);
const setups: Setup[] = [];
try {
  setups.push(await measure('memory cache', {}, undefined));
  setups.push(await measure('cache.store: redis', { cache: { store: 'redis', url, keyPrefix: 'capacity:' } }, redis));
  setups.push(
    await measure(
      'cache.store: redis + rateLimit',
      {
        cache: { store: 'redis', url, keyPrefix: 'capacity-rl:' },
        extra: { rateLimit: { requestsPerMinute: 100_000_000 } },
      },
      redis,
    ),
  );
} finally {
  redis.disconnect();
  child.kill('SIGKILL');
  removeBuild();
}

const result = {
  date: new Date().toISOString(),
  cores: cpus().length,
  requests: N,
  idleRssMb: rss,
  perUpstreamMb: Math.round(perUpstreamMb * 100) / 100,
  perSyntheticChildMb: Math.round(perChildMb * 10) / 10,
  setups: setups.map((s) => ({
    ...s,
    redisCommandsPerCall: s.redisPerCall && total(s.redisPerCall),
    redisCommandsPerCachedList: s.redisPerCachedList && total(s.redisPerCachedList),
  })),
};
mkdirSync(`${ROOT}bench/results`, { recursive: true });
writeFileSync(`${ROOT}bench/results/capacity.json`, `${JSON.stringify(result, null, 2)}\n`);
say(`wrote bench/results/capacity.json`);
