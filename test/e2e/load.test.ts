// Load through /mcp onto three upstreams (synthetic modern stdio servers, which answer a call with
// "<server>/<tool>: <text>"): 10,000 tools/call from 64 concurrent keep-alive clients, each with a payload of
// its own that must come back to it and to nobody else — zero lost, zero mismatched, zero unexpected errors —
// and afterwards nothing in flight anywhere (the edge's gauge, the cache layer, each child's pending map).
// Then a leak check on a gateway in a process of its own: what it holds live after a full GC (JS heap and
// external memory) grows by at most 1 MB over 10,000 calls made after a warm-up of 5,000.
//
// Ids are deliberately shared: half the requests use an integer id from 0 to 63 that other clients use at
// the same moment, so only the payload tells the answers apart; the other half use unique string ids.
// Every eighth request asks for progress, so its answer comes as an SSE stream. No timing is asserted:
// each run has a deadline only so that a hang fails instead of blocking.
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Upstream } from '../../bridge/upstream.js';
import { CachedUpstream } from '../../src/layers/cached-upstream.js';
import type { RunningGateway } from '../../src/gateway.js';
import { META, ROOT, sseTextMessages, startTestGateway, until, VERSION } from './harness.js';
import { launchGateway, type ChildGateway } from './child-gateway.js';
import { tempDir } from '../temp.js';

const SERVERS = ['a', 'b', 'c'] as const;
const TOOLS_EACH = 3;
const CLIENTS = 64;

const synthetic = (id: string) => ({
  command: process.execPath,
  args: ['test/fixtures/synthetic-server.mjs'],
  cwd: ROOT,
  era: 'modern',
  env: { SERVER_ID: id, TOOL_COUNT: String(TOOLS_EACH) },
});
const servers = Object.fromEntries(SERVERS.map((s) => [s, synthetic(s)]));

// ---- the load generator ------------------------------------------------------------------------------------

interface Tally {
  sent: number;
  /** Requests that got no HTTP answer at all (connection error, deadline). */
  lost: number[];
  /** Answers with another request's id or payload. */
  mismatched: string[];
  /** JSON-RPC errors, non-200 statuses, unreadable bodies. */
  errors: string[];
  /** How many answers each request got (must be exactly one). */
  answers: Uint8Array;
  timedOut: boolean;
}

/** The i-th request: which tool, which id, which payload, and the one answer text that belongs to it. */
function requestFor(i: number, run: string) {
  const server = SERVERS[i % SERVERS.length]!;
  const tool = `tool-${Math.floor(i / SERVERS.length) % TOOLS_EACH}`;
  const name = `${server}__${tool}`;
  const id: string | number = i % 2 === 0 ? i % CLIENTS : `${run}-${i}`;
  const payload = `${run}:${i}:${(i * 2654435761) % 4294967296}`;
  const progress = i % 8 === 7;
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name, arguments: { text: payload }, _meta: progress ? { ...META, progressToken: `t${i}` } : META },
  });
  return { name, id, body, expected: `${server}/${tool}: ${payload}` };
}

/** The last message of an answer: a JSON body, or the last event of an SSE stream. */
function lastMessage(type: string, text: string): any {
  if (!type.startsWith('text/event-stream')) return JSON.parse(text);
  return sseTextMessages(text).at(-1);
}

/** Sends requests `from` … `to - 1` from CLIENTS workers over one keep-alive agent, checking every answer. */
async function load(url: string, from: number, to: number, run: string, deadlineMs: number): Promise<Tally> {
  const target = new URL(url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: CLIENTS });
  const tally: Tally = {
    sent: 0,
    lost: [],
    mismatched: [],
    errors: [],
    answers: new Uint8Array(to - from),
    timedOut: false,
  };
  let next = from;
  const watchdog = setTimeout(() => {
    tally.timedOut = true;
    agent.destroy(); // fails every request in flight; workers stop taking new ones
  }, deadlineMs);
  const one = (i: number): Promise<void> =>
    new Promise((resolve) => {
      const r = requestFor(i, run);
      tally.sent++;
      const req = http.request(
        {
          host: target.hostname,
          port: target.port,
          path: target.pathname,
          method: 'POST',
          agent,
          headers: {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            'mcp-protocol-version': VERSION,
            'mcp-method': 'tools/call',
            'mcp-name': r.name,
            'content-length': Buffer.byteLength(r.body),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => {
            tally.answers[i - from]!++;
            const text = Buffer.concat(chunks).toString('utf8');
            try {
              const message = lastMessage(String(res.headers['content-type'] ?? ''), text);
              if (res.statusCode !== 200 || 'error' in message)
                tally.errors.push(`#${i}: ${res.statusCode} ${text.slice(0, 200)}`);
              else if (message.id !== r.id || message.result?.content?.[0]?.text !== r.expected) {
                tally.mismatched.push(
                  `#${i} sent id ${JSON.stringify(r.id)} expecting ${JSON.stringify(r.expected)}, got ` +
                    `${text.slice(0, 200)}`,
                );
              }
            } catch (error) {
              tally.errors.push(`#${i}: unreadable (${(error as Error).message}): ${text.slice(0, 200)}`);
            }
            resolve();
          });
          res.on('error', () => {
            tally.lost.push(i);
            resolve();
          });
        },
      );
      req.on('error', () => {
        tally.lost.push(i);
        resolve();
      });
      req.end(r.body);
    });
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (next < to && !tally.timedOut) await one(next++);
    }),
  );
  clearTimeout(watchdog);
  agent.destroy();
  return tally;
}

function assertClean(tally: Tally, from: number, to: number): void {
  assert.equal(
    tally.timedOut,
    false,
    `the run did not finish before its deadline (${tally.sent} of ${to - from} sent)`,
  );
  assert.equal(tally.sent, to - from);
  assert.deepEqual(tally.lost.slice(0, 10), [], `${tally.lost.length} requests got no answer`);
  assert.deepEqual(tally.mismatched.slice(0, 5), [], `${tally.mismatched.length} answers belonged to another request`);
  assert.deepEqual(tally.errors.slice(0, 5), [], `${tally.errors.length} unexpected errors`);
  const counts = new Map<number, number>();
  for (const n of tally.answers) counts.set(n, (counts.get(n) ?? 0) + 1);
  assert.deepEqual([...counts], [[1, to - from]], 'every request answered exactly once');
}

async function inFlightMetric(base: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const match = /^mcp_gateway_requests_in_flight (\S+)$/m.exec(text);
  assert.ok(match, 'mcp_gateway_requests_in_flight in /metrics');
  return Number(match[1]);
}

// ---- 1. 10,000 calls, in process ---------------------------------------------------------------------------

/** The layers an upstream is wrapped in (cache, MRTR bridge, the stdio bridge), outermost first. */
function layers(upstream: Upstream): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  let layer: unknown = upstream;
  for (let depth = 0; depth < 12 && layer && typeof layer === 'object'; depth++) {
    out.push(layer as Record<string, unknown>);
    layer = (layer as { inner?: unknown }).inner;
  }
  return out;
}

describe('10,000 tools/call at 64 concurrent clients through /mcp onto three upstreams', () => {
  let gateway: RunningGateway;
  before(async () => {
    gateway = await startTestGateway(servers, {}, { aggregate: { listDeadlineMs: 30_000 } });
  });
  after(() => gateway?.close());

  test(
    'zero lost, zero mismatched, zero unexpected errors; ' + 'then nothing in flight and every pending map empty',
    async (t) => {
      const total = 10_000;
      const tally = await load(`${gateway.url}/mcp`, 0, total, 'load', 120_000);
      assertClean(tally, 0, total);
      t.diagnostic(`${total} calls answered, each exactly once and to its own caller`);

      assert.ok(
        await until(async () => (await inFlightMetric(gateway.url)) === 0, 5_000),
        'mcp_gateway_requests_in_flight returns to 0',
      );
      for (const server of SERVERS) {
        const stack = layers(gateway.upstreams.get(server)!);
        // The stdio bridge's multiplexer: gateway ids → callers. Every answer must have taken its entry out.
        const withPending = stack.find(
          (layer) => typeof (layer.pending as { size?: unknown } | undefined)?.size === 'number',
        );
        assert.ok(
          withPending,
          `${server}: found the pending-request map (${stack.map((l) => l.constructor.name).join(' → ')})`,
        );
        assert.equal((withPending.pending as { size: number }).size, 0, `${server}: pending requests left`);
        // Fail, not pass quietly, when the layer that counts requests in flight is no longer found. Found by its
        // class: another layer with an inFlight count (the limits) would otherwise stand in for it unnoticed.
        const cached: Record<string, unknown> | undefined = stack.find((layer) => layer instanceof CachedUpstream);
        assert.ok(cached, `${server}: found the cache layer (${stack.map((l) => l.constructor.name).join(' → ')})`);
        assert.equal(
          typeof cached.inFlight,
          'number',
          `${server}: the cache layer's in-flight count is where this test reads it`,
        );
        assert.equal(cached.inFlight, 0, `${server}: the cache layer counts requests in flight`);
        for (const layer of stack)
          if (typeof layer.inFlight === 'number')
            assert.equal(layer.inFlight, 0, `${server}: ${layer.constructor.name} counts requests in flight`);
      }
    },
  );
});

// ---- 2. leak check: a gateway in its own process -----------------------------------------------------------

const LEAK_WARMUP = 5_000;
const LEAK_CALLS = 10_000;
const LEAK_STEP = 2_500;
/**
 * The bound on the live set (heapUsed + external right after two full GCs): 1 MB over LEAK_CALLS, so anything
 * retaining about 105 bytes or more per call fails. Without a leak it moves by a few hundred KB at most
 * between samples, loaded machine or not (compiled code, lazily built tables), while a leak adds to it call
 * after call. RSS is no measure at this size: it moves by tens of MB on a loaded machine (below).
 */
const LIVE_BOUND_MB = 1;
/**
 * A backstop for memory outside V8's view (native handles and the like): the lower RSS of the last two
 * samples at most this much above the higher of the warm-up's two. Low samples are the noise here (in one
 * loaded run RSS fell 23 MB between two samples, 16 MB of it V8 shrinking its heap while the starved process
 * looked idle), so a leak must lift both final samples, and a low warm-up sample is not the baseline.
 */
const RSS_BOUND_MB = 20;

/**
 * The gateway runs with --expose-gc and a one-line preload that answers SIGUSR2 with two full GCs and a line
 * on stdout (the gateway writes nothing there): memory is sampled after it, so that garbage not yet
 * collected does not pass for a leak, nor a collection that just happened hide one.
 */
describe(
  `leak check: the live set after ${LEAK_CALLS.toLocaleString('en')} more calls vs after a warm-up of ` +
    `${LEAK_WARMUP.toLocaleString('en')}`,
  () => {
    const dir = tempDir('mcp-gw-load-');
    let gateway: ChildGateway;
    let base: string;
    const MB = 1024 * 1024;
    /** The gateway's memory right after a full GC in it, in MB: live (heapUsed + external) and RSS. */
    const sample = async (): Promise<{ live: number; rss: number }> => {
      const usage = await gateway.memory();
      return { live: (usage.heapUsed + usage.external) / MB, rss: usage.rss / MB };
    };

    before(async () => {
      const config = path.join(dir, 'gateway.config.json');
      writeFileSync(
        config,
        JSON.stringify({ listen: { port: 0 }, log: { level: 'warn' }, aggregate: { listDeadlineMs: 30_000 }, servers }),
      );
      gateway = await launchGateway(config);
      base = gateway.base;
    });

    after(async () => {
      await gateway?.stop();
      rmSync(dir, { recursive: true, force: true });
    });

    test(
      `live set grows ≤ ${LIVE_BOUND_MB} MB over ${LEAK_CALLS} calls (RSS ≤ +${RSS_BOUND_MB} MB); every call ` +
        `answered right`,
      async (t) => {
        const samples: [number, { live: number; rss: number }][] = [];
        for (let from = 0; from < LEAK_WARMUP + LEAK_CALLS; from += LEAK_STEP) {
          const tally = await load(`${base}/mcp`, from, from + LEAK_STEP, 'leak', 60_000);
          assertClean(tally, from, from + LEAK_STEP);
          samples.push([from + LEAK_STEP, await sample()]);
        }
        t.diagnostic(
          `live / RSS by calls: ` +
            `${samples.map(([n, m]) => `${n / 1000}k ${m.live.toFixed(2)} / ${m.rss.toFixed(1)} MB`).join(', ')}`,
        );
        assert.equal(gateway.child.exitCode, null, `the gateway exited:\n${gateway.log()}`);
        const warm = samples.filter(([n]) => n <= LEAK_WARMUP).map(([, m]) => m);
        const first = warm.at(-1)!;
        const last = samples.at(-1)![1];
        assert.ok(
          last.live <= first.live + LIVE_BOUND_MB,
          `the live set grew from ${first.live.toFixed(2)} MB to ${last.live.toFixed(2)} MB over ${LEAK_CALLS} calls ` +
            `(bound +${LIVE_BOUND_MB} MB)`,
        );
        const rssWarm = Math.max(...warm.map((m) => m.rss));
        const rssEnd = Math.min(...samples.slice(-2).map(([, m]) => m.rss));
        assert.ok(
          rssEnd <= rssWarm + RSS_BOUND_MB,
          `RSS grew from ${rssWarm.toFixed(1)} MB to ${rssEnd.toFixed(1)} MB (bound +${RSS_BOUND_MB} MB)`,
        );
        assert.ok(
          await until(async () => (await inFlightMetric(base)) === 0, 5_000),
          'mcp_gateway_requests_in_flight returns to 0',
        );
      },
    );
  },
);
