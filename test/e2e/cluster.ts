// Three gateway replicas (the CLI, each its own process) sharing the Redis on 127.0.0.1:6379 behind Debian's
// HAProxy on deploy/haproxy.cfg (its backends pointed at this machine), and the clients that watch them while
// they restart: callers of a tool, a reconnecting subscriptions/listen client, and held MRTR calls.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { Redis } from 'ioredis';
import { launchGateway, type ChildGateway } from './child-gateway.js';
import { read } from './deploy-helpers.js';
import { startHaproxy } from './haproxy-process.js';
import { eachSseMessage, fixture, headersFor, post, request, ROOT, until, type Answer } from './harness.js';
import { onFreePort, stablePort } from '../ports.js';
import { haproxyBinary, sharedRedis } from '../services.js';

export const DRAIN_DELAY_MS = 2000;
const REDIS = 'redis://127.0.0.1:6379';
const needs = [
  haproxyBinary('a rolling restart behind HAProxy'),
  await sharedRedis('a rolling restart behind HAProxy'),
];
/** For the describe's options: why it is skipped (locally, when HAProxy or Redis is missing), or false. */
export const SKIP = needs.map((n) => n.skip).find((reason) => reason !== false) ?? false;

/** deploy/haproxy.cfg with its listener and backends on loopback, checks every 300 ms, and a CSV stats page. */
function haproxyConfig(listen: number, stats: number, backends: number[]): string {
  const text = read('deploy/haproxy.cfg')
    .replace(/^resolvers docker\n(?:[ \t]+.*\n)+/m, '')
    .replace(/ resolvers docker/, '')
    .replace(/\binter 1s\b/, 'inter 300ms')
    .replace(/^\s*bind :8080$/m, `    bind 127.0.0.1:${listen}`)
    .replace(
      /^\s*server gateway(\d) gateway\d:8080$/gm,
      (_line, n: string) => `    server gateway${n} 127.0.0.1:${backends[Number(n) - 1]}`,
    )
    .replace(/^\s*log stdout.*$/m, '');
  assert.doesNotMatch(text, /gateway\d:8080|resolvers/, 'the test could not point deploy/haproxy.cfg at this machine');
  return `${text}\nlisten stats\n    bind 127.0.0.1:${stats}\n    stats enable\n    stats uri /stats\n`;
}

/** One replica's config: shared Redis and secrets, its own port and internal URL; a modern and a 2025 server. */
function replicaConfig(dir: string, port: number, shared: Record<string, string>): string {
  const file = path.join(dir, `replica-${port}.yaml`);
  writeFileSync(
    file,
    JSON.stringify({
      listen: { host: '127.0.0.1', port, drainDelayMs: DRAIN_DELAY_MS, drainMs: 10_000 },
      aggregate: { cursorSecret: shared.secret },
      cache: { store: 'redis', url: REDIS, keyPrefix: shared.prefix, contextSecret: shared.secret },
      mrtr: { secret: shared.secret, internalUrl: `http://127.0.0.1:${port}` },
      legacyClients: { sessionSecret: shared.secret },
      servers: {
        s: {
          command: process.execPath,
          args: [path.join(ROOT, 'test/fixtures/synthetic-server.mjs')],
          env: { SERVER_ID: `r${port}` },
        },
        // Two 2025 servers: on stdio a server may ask only while one call is in flight on it (the gateway
        // cannot tell which call asks otherwise), so each holds at most one call at a time.
        legacy: { ...fixture('legacy-server'), era: 'legacy' },
        legacy2: { ...fixture('legacy-server'), era: 'legacy' },
      },
    }),
  );
  return file;
}

export interface Cluster {
  /** HAProxy's address: what clients use. */
  front: string;
  ports: number[];
  replicas: ChildGateway[];
  /** Resolves once HAProxy counts `n` replicas UP. */
  upCount(): Promise<number>;
  haproxyLog(): string;
  /** Starts replica `i` again on its port and config. */
  relaunch(i: number): Promise<void>;
  close(): Promise<void>;
}

/** Starts the three replicas and HAProxy; under CI=true, fails naming HAProxy or Redis if one is missing. */
export async function startCluster(dir: string): Promise<Cluster> {
  for (const need of needs) need.check();
  const shared = {
    secret: randomBytes(24).toString('hex'),
    prefix: `mcp-gateway-rolling-${randomBytes(4).toString('hex')}:`,
  };
  // Each replica's config names its own port (its internal URL), so the port is chosen first: one taken by
  // another process in between is tried again on another. Below the ephemeral range (stablePort), because a
  // replica restarts on its port: no outgoing connection of the machine can take it while it is down.
  const started = await Promise.all(
    [0, 1, 2].map(() =>
      onFreePort(
        async (port) => {
          const file = replicaConfig(dir, port, shared);
          return { port, file, replica: await launchGateway(file, port) };
        },
        5,
        stablePort,
      ),
    ),
  );
  const ports = started.map((s) => s.port);
  const files = started.map((s) => s.file);
  const replicas = started.map((s) => s.replica);
  const { front, stats, haproxy, haproxyLog } = await onFreePort((front) =>
    onFreePort((stats) => startBalancer(dir, front, stats, ports)),
  );
  const upCount = async () =>
    Object.values(await backendStates(stats).catch(() => ({}))).filter((s) => s === 'UP').length;
  const cluster: Cluster = {
    front: `http://127.0.0.1:${front}`,
    ports,
    replicas,
    upCount,
    haproxyLog,
    relaunch: async (i) => {
      replicas[i] = await launchGateway(files[i]!, ports[i]!);
    },
    close: async () => {
      haproxy.kill('SIGTERM');
      await Promise.all(replicas.map((replica) => replica.stop()));
      const redis = new Redis(REDIS);
      const keys = await redis.keys(`${shared.prefix}*`);
      if (keys.length) await redis.del(...keys);
      redis.disconnect();
    },
  };
  assert.ok(
    await until(async () => (await upCount()) === 3, 20_000, 100),
    `HAProxy did not see three replicas up:\n${haproxyLog()}`,
  );
  return cluster;
}

/** HAProxy on the deployment config, once its stats page answers; PortTaken when it cannot bind a port. */
async function startBalancer(dir: string, front: number, stats: number, backends: number[]) {
  const config = haproxyConfig(front, stats, backends);
  const { process: haproxy, log } = await startHaproxy(path.join(dir, 'haproxy.cfg'), config, front, () =>
    backendStates(stats),
  );
  return { front, stats, haproxy, haproxyLog: log };
}

/** The state HAProxy gives each backend server (UP, DOWN, …), from its CSV stats. */
async function backendStates(stats: number): Promise<Record<string, string>> {
  const csv = await (await fetch(`http://127.0.0.1:${stats}/stats;csv`)).text();
  const rows = csv.split('\n').map((line) => line.split(','));
  const status = rows[0]!.indexOf('status');
  return Object.fromEntries(
    rows.filter((row) => row[0] === 'gateways' && row[1]!.startsWith('gateway')).map((row) => [row[1]!, row[status]!]),
  );
}

export interface Failure {
  client: number;
  what: string;
}

function parsedOrUndefined(text: string): any {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** `clients` callers of tool-0, each calling again as soon as it is answered, until stopped. */
export function toolLoad(endpoint: string, clients: number) {
  const failures: Failure[] = [];
  let succeeded = 0;
  let running = true;
  const client = async (n: number) => {
    for (let i = 0; running; i++) {
      const call = request('tools/call', { name: 'tool-0', arguments: { text: `${n}-${i}` } });
      try {
        const response = await fetch(endpoint, {
          method: 'POST',
          headers: headersFor(call),
          body: JSON.stringify(call),
        });
        // Read as text first: HAProxy's own answers (a 502 for a call sent to a replica that died) are HTML,
        // and are recorded with their status rather than as a JSON error that hides it.
        const text = await response.text();
        const body = parsedOrUndefined(text);
        if (response.status === 200 && body?.result?.content?.[0]?.text?.endsWith(`: ${n}-${i}`)) succeeded++;
        else failures.push({ client: n, what: `${response.status} ${text.slice(0, 200)}` });
      } catch (error) {
        failures.push({
          client: n,
          what: `${(error as Error).message}: ${String((error as { cause?: unknown }).cause)}`,
        });
      }
    }
  };
  const done = Promise.all(Array.from({ length: clients }, (_, n) => client(n)));
  return {
    failures,
    get succeeded() {
      return succeeded;
    },
    stop: () => {
      running = false;
      return done;
    },
  };
}

/**
 * A subscriptions/listen client for tools list changes that opens its stream again whenever it ends, as
 * clients do (a quarter second later). `open` says whether a stream is open and has been acknowledged.
 */
export function reconnectingListen(url: string) {
  const state = { opened: 0, open: false, changes: 0, errors: [] as string[] };
  const controller = new AbortController();
  let running = true;
  const once = async () => {
    const body = request('subscriptions/listen', { notifications: { toolsListChanged: true } });
    const response = await fetch(url, {
      method: 'POST',
      headers: headersFor(body),
      body: JSON.stringify(body),
      signal: controller.signal,
    });
    if (response.status !== 200) throw new Error(`listen answered ${response.status}: ${await response.text()}`);
    state.opened++;
    try {
      await eachSseMessage(response.body!, (message) => {
        state.open = true; // the first message acknowledges the stream
        if (message.method === 'notifications/tools/list_changed') state.changes++;
      });
    } finally {
      state.open = false;
    }
  };
  const loop = (async () => {
    while (running) {
      await once().catch((error: Error) => running && state.errors.push(error.message));
      if (running) await new Promise((resolve) => setTimeout(resolve, 250));
    }
  })();
  return {
    state,
    stop: () => {
      running = false;
      controller.abort();
      return loop;
    },
  };
}

/** A call to the 2025 server's `ask` tool (a server request mid-call), from a client that can answer it. */
const ASK = (question: string) =>
  request('tools/call', {
    name: 'ask',
    arguments: { question },
    _meta: { 'io.modelcontextprotocol/clientCapabilities': { elicitation: {} } },
  });
export const ANSWER = { 'elicitation-1': { action: 'accept', content: { name: 'after the restart' } } };

/**
 * A call to the 2025 server's `ask` tool, sent to `url`: the replica there holds it; returns it and its requestState.
 */
export async function holdCall(url: string, server: string, question: string): Promise<Held> {
  const first = ASK(question);
  const answer = await post(`${url}/servers/${server}/mcp`, first);
  assert.equal(answer.body?.result?.resultType, 'input_required', JSON.stringify(answer.body).slice(0, 300));
  return { server, first, requestState: answer.body.result.requestState };
}
export interface Held {
  server: string;
  first: ReturnType<typeof ASK>;
  requestState: string;
}

/** The retry of a held call (same params, the answer and its requestState), sent to `url`. */
export function retryCall(url: string, held: Held): Promise<Answer> {
  const body = {
    ...held.first,
    id: `${held.first.id}-retry`,
    params: { ...held.first.params, inputResponses: ANSWER, requestState: held.requestState },
  };
  return post(`${url}/servers/${held.server}/mcp`, body);
}
