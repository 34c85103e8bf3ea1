// npm run bench:tracing — what tracing costs: the same gateway (compiled, one stdio upstream) with tracing
// off and with tracing on, always-on sampling, every span exported over OTLP/HTTP protobuf to a sink in this
// process that reads and drops them. tools/call at 16 clients, off and on alternated (ABAB…) so a busy
// machine's drift hits both alike; prints each round and the median throughput ratio on/off (target ≥ 0.8),
// and beside it the gateway's own CPU per call (every thread, from schedstat), which a busy machine's
// scheduling disturbs less than throughput: its ratio off/on is the throughput ratio a CPU-bound gateway
// would see.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpuNs } from './ab-gateways.js';
import { startGateway } from './aggregate.js';
import { removeBuild } from './build.js';
import { httpLoad, type LoadResult } from './load.js';
import { META, mcpHeaders } from './wire.js';

const HEADERS = mcpHeaders('tools/call', 's0__tool-1');
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
  const on = await startGateway(1, 5, {
    extra: { telemetry: { traces: { endpoint, protocol: 'http/protobuf', sampler: 'always_on' } } },
  });
  const load = async (gateway: typeof off, total: number): Promise<LoadResult & { cpuUsPerCall: number }> => {
    const cpuBefore = cpuNs(gateway.process.pid!);
    const result = await httpLoad({
      url: gateway.url,
      headers: HEADERS,
      body: (i) =>
        JSON.stringify({
          jsonrpc: '2.0',
          id: i,
          method: 'tools/call',
          params: { name: 's0__tool-1', arguments: {}, _meta: META },
        }),
      check: (text) => JSON.parse(text).result !== undefined,
      concurrency: CONCURRENCY,
      total,
    });
    return { ...result, cpuUsPerCall: (cpuNs(gateway.process.pid!) - cpuBefore) / 1000 / result.calls };
  };
  try {
    await load(off, 500); // warm-up: children started, code paths compiled
    await load(on, 500);
    const ratios: number[] = [];
    const cpuRatios: number[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      // Alternate which goes first, so neither always follows the other's garbage.
      const [first, second] = round % 2 ? [off, on] : [on, off];
      const a = await load(first, CALLS);
      const b = await load(second, CALLS);
      const [offResult, onResult] = first === off ? [a, b] : [b, a];
      if (offResult.errors || onResult.errors)
        throw new Error(`errors: off ${offResult.errors}, on ${onResult.errors}`);
      ratios.push(onResult.callsPerSecond / offResult.callsPerSecond);
      cpuRatios.push(offResult.cpuUsPerCall / onResult.cpuUsPerCall);
      const line = (r: typeof a) =>
        `${r.callsPerSecond.toFixed(0)}/s p50 ${r.p50Ms.toFixed(2)} ms ${r.cpuUsPerCall.toFixed(0)} µs CPU/call`;
      console.log(
        `round ${round}: off ${line(offResult)} · on ${line(onResult)} · throughput ×${ratios.at(-1)!.toFixed(3)} · ` +
          `CPU ×${cpuRatios.at(-1)!.toFixed(3)}`,
      );
    }
    const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
    console.log(
      `tracing on (always_on, OTLP/HTTP protobuf) vs off, tools/call at ${CONCURRENCY} clients, median of ${ROUNDS} ` +
        `(target ≥ 0.8):`,
    );
    console.log(
      `  throughput ×${median(ratios).toFixed(3)} · by the gateway's CPU per call ×${median(cpuRatios).toFixed(3)} ` +
        `· ${(spansBytes / 1024).toFixed(0)} KiB of spans received`,
    );
  } finally {
    off.process.kill('SIGTERM');
    on.process.kill('SIGTERM');
    sink.close();
    removeBuild();
  }
}

await main();
