// npm run bench:tracing — what tracing costs: the same gateway (compiled, one stdio upstream) with tracing
// off and with tracing on, always-on sampling, every span exported over OTLP/HTTP protobuf to a sink in this
// process that reads and drops them. tools/call at 16 clients, off and on alternated (ABAB…) so a busy
// machine's drift hits both alike; prints each round and the median throughput ratio on/off (target ≥ 0.8).
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startGateway } from './aggregate.js';
import { removeBuild } from './build.js';
import { httpLoad, type LoadResult } from './load.js';

const META = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };
const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 's0__tool-1' };
const CALLS = Number(process.env.BENCH_CALLS ?? 5_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);

async function main(): Promise<void> {
  let spansBytes = 0;
  const sink = createServer((req, res) => {
    req.on('data', (c: Buffer) => (spansBytes += c.length));
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end());
  });
  await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', resolve));
  const endpoint = `http://127.0.0.1:${(sink.address() as AddressInfo).port}`;
  const off = await startGateway(1, 5);
  const on = await startGateway(1, 5, { extra: { telemetry: { traces: { endpoint, protocol: 'http/protobuf', sampler: 'always_on' } } } });
  const load = (url: string, total: number): Promise<LoadResult> =>
    httpLoad({
      url,
      headers: HEADERS,
      body: (i) => JSON.stringify({ jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 's0__tool-1', arguments: {}, _meta: META } }),
      check: (text) => JSON.parse(text).result !== undefined,
      concurrency: CONCURRENCY,
      total,
    });
  try {
    await load(off.url, 500); // warm-up: children started, code paths compiled
    await load(on.url, 500);
    const ratios: number[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      // Alternate which goes first, so neither always follows the other's garbage.
      const [first, second] = round % 2 ? [off, on] : [on, off];
      const a = await load(first.url, CALLS);
      const b = await load(second.url, CALLS);
      const [offResult, onResult] = first === off ? [a, b] : [b, a];
      if (offResult.errors || onResult.errors) throw new Error(`errors: off ${offResult.errors}, on ${onResult.errors}`);
      ratios.push(onResult.callsPerSecond / offResult.callsPerSecond);
      console.log(`round ${round}: off ${offResult.callsPerSecond.toFixed(0)}/s p50 ${offResult.p50Ms.toFixed(2)} ms · on ${onResult.callsPerSecond.toFixed(0)}/s p50 ${onResult.p50Ms.toFixed(2)} ms · ratio ${ratios.at(-1)!.toFixed(3)}`);
    }
    const median = [...ratios].sort((x, y) => x - y)[Math.floor(ratios.length / 2)]!;
    console.log(`tracing on (always_on, OTLP/HTTP protobuf) vs off, tools/call at ${CONCURRENCY} clients: throughput ×${median.toFixed(3)} (median of ${ROUNDS}; target ≥ 0.8) · ${(spansBytes / 1024).toFixed(0)} KiB of spans received`);
  } finally {
    off.process.kill('SIGTERM');
    on.process.kill('SIGTERM');
    sink.close();
    removeBuild();
  }
}

await main();
