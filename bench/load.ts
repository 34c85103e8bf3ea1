// A lean load generator: node:http with a keep-alive agent, N workers each sending one request after
// another, latencies from hrtime. Lean on purpose: fetch would add more overhead than the gateway.
import http from 'node:http';

export interface LoadResult {
  calls: number;
  errors: number;
  seconds: number;
  callsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** Set when the deadline stopped the run before `total` calls. */
  timedOut?: boolean;
}

export function summarise(latenciesNs: bigint[], errors: number, seconds: number): LoadResult {
  const sorted = latenciesNs.map((ns) => Number(ns) / 1e6).sort((a, b) => a - b);
  const pick = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
  return {
    calls: sorted.length,
    errors,
    seconds,
    callsPerSecond: sorted.length / seconds,
    p50Ms: pick(0.5),
    p99Ms: pick(0.99),
  };
}

/** Sends `total` POSTs of `body(i)` from `concurrency` workers; `check` says whether an answer is right. */
export async function httpLoad(options: {
  url: string;
  /** The same for every request, or per request (tools/call needs its own Mcp-Name). */
  headers: Record<string, string> | ((i: number) => Record<string, string>);
  body: (i: number) => string;
  check: (text: string, i: number) => boolean;
  /**
   * Hand `check` only the answer's first bytes (the whole answer is still read to its end): for answers
   * of a megabyte, decoding all of it per response would measure the load generator, not the server.
   */
  headBytes?: number;
  concurrency: number;
  total: number;
  /** Wall-clock bound for the whole run (default 10 min): then in-flight requests are dropped as errors. */
  deadlineMs?: number;
}): Promise<LoadResult> {
  const url = new URL(options.url);
  const limit = options.headBytes ?? Infinity;
  const agent = new http.Agent({ keepAlive: true, maxSockets: options.concurrency });
  const latencies: bigint[] = [];
  let errors = 0;
  let next = 0;
  let timedOut = false;
  // One watchdog for the run, not a timer per request: destroying the agent's sockets fails every request
  // in flight, and the workers stop taking new ones.
  const watchdog = setTimeout(() => {
    timedOut = true;
    agent.destroy();
  }, options.deadlineMs ?? 600_000);
  const one = (i: number): Promise<void> =>
    new Promise((resolve) => {
      const payload = options.body(i);
      const headers = typeof options.headers === 'function' ? options.headers(i) : options.headers;
      const started = process.hrtime.bigint();
      const req = http.request(
        {
          host: url.hostname,
          port: url.port,
          path: url.pathname,
          method: 'POST',
          agent,
          headers: { ...headers, 'content-length': Buffer.byteLength(payload) },
        },
        (res) => {
          const chunks: Buffer[] = [];
          let kept = 0;
          res.on('data', (c: Buffer) => {
            if (kept >= limit) return;
            chunks.push(c);
            kept += c.length;
          });
          res.on('end', () => {
            latencies.push(process.hrtime.bigint() - started);
            const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
            if (res.statusCode !== 200 || !options.check(body.toString('utf8', 0, Math.min(limit, body.length)), i))
              errors++;
            resolve();
          });
        },
      );
      req.on('error', () => {
        errors++;
        resolve();
      });
      req.end(payload);
    });
  const began = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: options.concurrency }, async () => {
      while (next < options.total && !timedOut) await one(next++);
    }),
  );
  const seconds = Number(process.hrtime.bigint() - began) / 1e9;
  clearTimeout(watchdog);
  agent.destroy();
  return timedOut ? { ...summarise(latencies, errors, seconds), timedOut } : summarise(latencies, errors, seconds);
}
