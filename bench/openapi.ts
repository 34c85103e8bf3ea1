// node --import tsx bench/openapi.ts — an OpenAPI server's costs (issue 49), run alone (not a test):
// 1. tools/list of a generated 500-operation document from the gateway's cache, against a stdio server's
//    (test/fixtures/synthetic-server.mjs) list of 500 tools from the same cache, on /servers/<name>/mcp;
// 2. a call's added cost: tools/call of one GET operation through the gateway, against the same GET sent
//    straight to the REST server (test/fixtures/openapi/rest-server.ts) with undici over keep-alive.
// Sequential requests, one client; p50 and p90 of BENCH_OPENAPI_N (default 500) after 50 warm-up requests.
//
// Figures on the helpers' shared 2-core machine, Node 20, 2026-12-07 (load average ~17 from other work:
// compare the rows, not the absolute numbers), three runs, N = 500 (the 1,500 run was under --cpu-prof):
//                                   run 1 p50 / p90       run 2 p50 / p90      run 3 (N=1500) p50 / p90
//   list api   501 tools, 181 KB:   1.948 / 15.702 ms     0.951 / 6.469 ms     0.582 / 1.750 ms
//   list stdio 500 tools, 105 KB:   0.452 / 11.483 ms     0.354 / 3.817 ms     0.265 / 0.398 ms
//   call through the gateway:       1.329 / 17.574 ms     0.804 / 13.484 ms    0.495 / 0.686 ms
//   direct GET:                     0.171 /  0.714 ms     0.178 /  0.902 ms    0.110 / 0.190 ms
//   added by the gateway (p50):     1.158 ms              0.626 ms             0.386 ms
// Three runs more the same day, N = 500, load average 15-16 (the first before the origin rule, two after):
//   list api    0.789 / 8.990, 0.982 / 12.440, 0.838 / 15.973 ms
//   list stdio  0.497 / 7.215, 0.631 / 10.799, 0.586 /  9.381 ms
//   call        0.794 / 11.354, 0.715 / 12.889, 0.778 / 12.000 ms
//   direct GET  0.090 / 0.244, 0.083 / 0.253, 0.084 / 0.228 ms;  added by the gateway (p50) 0.704, 0.633, 0.695 ms
// Both lists are served from the cache (one upstream tools/list in all). The OpenAPI list costs 2-4x the
// stdio one: 1.7x the bytes (real schemas, outputSchema), the rest not yet accounted for.
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Agent, request } from 'undici';
import { parseConfig } from '../src/config/config.js';
import { startGateway } from '../src/gateway.js';
import { silentLog } from '../infra/log.js';
import { startRestServer } from '../test/fixtures/openapi/rest-server.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const N = Number(process.env.BENCH_OPENAPI_N ?? 500);
const WARM = 50;
const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
};
const agent = new Agent({ keepAliveTimeout: 30_000, connections: 1 });

function documentOf(operations: number): unknown {
  const paths: Record<string, unknown> = {};
  const thing = { $ref: '#/components/schemas/Thing' };
  const ok = { description: 'ok', content: { 'application/json': { schema: thing } } };
  for (let i = 0; i < operations / 2; i++) {
    const id = { name: 'petId', in: 'path', required: true, schema: { type: 'string' } };
    paths[`/pets${i}/{petId}`] = {
      get: { operationId: `getPet${i}`, summary: `Read pet ${i}`, parameters: [id], responses: { '200': ok } },
      put: {
        operationId: `putPet${i}`,
        parameters: [id],
        requestBody: { content: ok.content },
        responses: { '200': ok },
      },
    };
  }
  // The one operation the REST server answers (its showPetById).
  paths['/pets/{petId}'] = {
    get: {
      operationId: 'showPetById',
      parameters: [{ name: 'petId', in: 'path', required: true, schema: { type: 'string' } }],
      responses: { '200': ok },
    },
  };
  const Thing = { type: 'object', properties: { id: { type: 'integer' }, name: { type: 'string', nullable: true } } };
  return { openapi: '3.0.3', info: { title: 'bench', version: '1' }, paths, components: { schemas: { Thing } } };
}

async function timed(send: () => Promise<void>): Promise<{ p50: number; p90: number }> {
  for (let i = 0; i < WARM; i++) await send();
  const samples: number[] = [];
  for (let i = 0; i < N; i++) {
    const start = process.hrtime.bigint();
    await send();
    samples.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  samples.sort((a, b) => a - b);
  return { p50: samples[Math.floor(N / 2)]!, p90: samples[Math.floor(N * 0.9)]! };
}

async function rpc(url: string, method: string, params: Record<string, unknown>, name?: string): Promise<string> {
  const response = await request(url, {
    method: 'POST',
    dispatcher: agent,
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': method,
      ...(name && { 'mcp-name': name }),
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: META } }),
  });
  return response.body.text();
}

const rest = await startRestServer();
const file = path.join(tmpdir(), `bench-openapi-${process.pid}.json`);
writeFileSync(file, JSON.stringify(documentOf(500)));
const config = parseConfig(
  {
    listen: { port: 0 },
    servers: {
      api: { openapi: file, baseUrl: `${rest.url}/v1`, maxInFlight: 64 },
      stdio: {
        command: process.execPath,
        args: [path.join(ROOT, 'test/fixtures/synthetic-server.mjs')],
        env: { TOOL_COUNT: '500' },
      },
    },
  },
  'bench',
  ROOT,
);
const gateway = await startGateway(config, silentLog);
try {
  const rows: string[] = [];
  for (const server of ['api', 'stdio']) {
    const url = `${gateway.url}/servers/${server}/mcp`;
    const text = await rpc(url, 'tools/list', {});
    const tools = (JSON.parse(text).result?.tools ?? []).length;
    const { p50, p90 } = await timed(async () => void (await rpc(url, 'tools/list', {})));
    rows.push(
      `list ${server.padEnd(5)} ${tools} tools, ${text.length} bytes: ` +
        `p50 ${p50.toFixed(3)} ms, p90 ${p90.toFixed(3)} ms`,
    );
  }
  const callUrl = `${gateway.url}/servers/api/mcp`;
  const args = { name: 'showPetById', arguments: { petId: 'Rex' } };
  const first = await rpc(callUrl, 'tools/call', args, 'showPetById');
  if (!first.includes('structuredContent')) throw new Error(`the call failed: ${first}`);
  const through = await timed(async () => void (await rpc(callUrl, 'tools/call', args, 'showPetById')));
  const direct = await timed(async () => {
    const response = await request(`${rest.url}/v1/pets/Rex`, {
      dispatcher: agent,
      headers: { accept: 'application/json' },
    });
    await response.body.text();
  });
  rows.push(`call through the gateway: p50 ${through.p50.toFixed(3)} ms, p90 ${through.p90.toFixed(3)} ms`);
  rows.push(`direct GET:               p50 ${direct.p50.toFixed(3)} ms, p90 ${direct.p90.toFixed(3)} ms`);
  rows.push(`added by the gateway:     p50 ${(through.p50 - direct.p50).toFixed(3)} ms`);
  console.log(rows.join('\n'));
} finally {
  await gateway.close();
  await rest.close();
  await agent.close();
}
