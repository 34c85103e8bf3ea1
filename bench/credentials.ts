// What a stored per-user token adds to a call, in process CPU: the credentials layer (src/credentials/)
// over an upstream that answers at once, against that upstream called directly with a static header's
// worth of work (none). The lookup is the hot path's: an OAuth token already read into memory.
// Target (issue 33): ≤ 20 µs more gateway CPU per call. Run: node --import tsx bench/credentials.ts
import { EventEmitter } from 'node:events';
import path from 'node:path';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import type { RequestOptions, Upstream } from '../bridge/upstream.js';
import type { JsonRpcRequest, JsonRpcResponse } from '../protocol/jsonrpc.js';
import { CredentialedUpstream } from '../src/layers/credentialed-upstream.js';
import { OAuthClient } from '../src/credentials/oauth/oauth-client.js';
import { openCredentialStore } from '../src/credentials/store.js';

const answering: Upstream = {
  name: 'crm',
  events: new EventEmitter(),
  status: () => ({ state: 'ready', era: 'modern', restarts: 0, lastError: undefined }),
  start: async () => {},
  close: async () => {},
  request: async (message: JsonRpcRequest, options?: RequestOptions): Promise<JsonRpcResponse> => ({
    jsonrpc: '2.0',
    id: message.id,
    result: { content: [], resultType: 'complete', auth: options?.authorization?.length ?? 0 },
  }),
};

const store = await openCredentialStore(
  { key: 'k'.repeat(32), store: 'file', file: path.join(mkdtempSync(path.join(tmpdir(), 'bench-cred-')), 'c.json') },
  { url: '', keyPrefix: '' },
);
const oauth = new OAuthClient({
  server: 'crm',
  url: 'http://127.0.0.1:1/mcp',
  settings: { type: 'oauth', scopes: [] },
  store,
  publicUrl: 'http://127.0.0.1:2',
  linkTtlMs: 60_000,
});
const principals = Array.from({ length: 1_000 }, (_, i) => `user-${i}@example.com`);
for (const principal of principals) {
  await store.put(principal, 'crm', {
    kind: 'oauth',
    accessToken: `token-${principal}-${'x'.repeat(800)}`,
    resource: 'http://127.0.0.1:1/mcp',
    issuer: 'i',
    clientId: 'gw',
    connectedAt: Date.now(),
    expiresAt: Date.now() + 3_600_000,
  });
}
const layered = new CredentialedUpstream(answering, oauth);
const message: JsonRpcRequest = {
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: { name: 'whoami', arguments: {} },
};
const callers = principals.map((principal) => ({ principal }));

async function cpuPerCall(upstream: Upstream, calls: number): Promise<number> {
  const start = process.cpuUsage();
  for (let i = 0; i < calls; i++)
    await upstream.request(message, { authContext: 'x', caller: callers[i % callers.length] });
  const used = process.cpuUsage(start);
  return ((used.user + used.system) / calls) * 1; // µs per call
}

const CALLS = 200_000;
await cpuPerCall(answering, CALLS); // warm up both paths
await cpuPerCall(layered, CALLS);
const rounds: number[] = [];
for (let round = 0; round < 7; round++)
  rounds.push((await cpuPerCall(layered, CALLS)) - (await cpuPerCall(answering, CALLS)));
rounds.sort((a, b) => a - b);
console.log(
  `credentials layer, token in memory (1000 principals): +${rounds[3]!.toFixed(2)} µs CPU per call (median of 7 ` +
    `rounds of ${CALLS}; min ${rounds[0]!.toFixed(2)}, max ${rounds[6]!.toFixed(2)}); target ≤ 20 µs`,
);
await store.close();
