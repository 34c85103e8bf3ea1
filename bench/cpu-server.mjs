// A CPU-bound modern (2026-07-28) stdio server without the SDK: each call to `burn` spins the CPU for
// BURN_MS (default 2 ms) in a busy loop, so one child is one core at most — what `instances` (child pools)
// is for. Used by the child-pool bench (bench/pool.ts) and by test/e2e/child-pools.test.ts.
//   BURN_MS        CPU each `burn` call spends                                       (default 2)
//   CHANGE_FILE    when set, every child watches this file and announces notifications/tools/list_changed
//                  when it changes (the `change` tool touches it), so all children of a pool announce one change
//   ANNOUNCE_LOG   when set, each child appends "ANNOUNCED <pid>" there when it announces
// Tools: `burn` (its `ms` argument, when given, instead of BURN_MS) and `pid` answer the child's pid (so a test sees
// which child served it); `change` touches
// CHANGE_FILE. tools/list carries the pid and a count of lists the child served in `_meta`.
import { appendFileSync, watchFile, writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';

const burnMs = Number(process.env.BURN_MS ?? 2);
const changeFile = process.env.CHANGE_FILE;
const announceLog = process.env.ANNOUNCE_LOG;
const serverInfo = { 'io.modelcontextprotocol/serverInfo': { name: 'cpu-server', version: '1.0.0' } };
const schema = { type: 'object', properties: {} };
let listsServed = 0;

const write = (message) => process.stdout.write(`${JSON.stringify(message)}\n`);
const text = (t) => ({ resultType: 'complete', content: [{ type: 'text', text: t }], _meta: serverInfo });

function burn(ms = burnMs) {
  const until = performance.now() + ms;
  let spins = 0;
  while (performance.now() < until) spins++;
  return spins;
}

function answer(message) {
  const p = message.params ?? {};
  switch (message.method) {
    case 'server/discover':
      return {
        resultType: 'complete',
        supportedVersions: ['2026-07-28'],
        capabilities: { tools: { listChanged: true } },
        ttlMs: 60000,
        cacheScope: 'public',
        _meta: serverInfo,
      };
    case 'tools/list':
      listsServed++;
      return {
        resultType: 'complete',
        tools: ['burn', 'pid', 'change'].map((name) => ({ name, inputSchema: schema })),
        ttlMs: 600000,
        cacheScope: 'public',
        _meta: { ...serverInfo, 'com.example/pid': process.pid, 'com.example/listsServed': listsServed },
      };
    case 'tools/call':
      if (p.name === 'burn') {
        burn(typeof p.arguments?.ms === 'number' ? p.arguments.ms : burnMs);
        return text(String(process.pid));
      }
      if (p.name === 'pid') return text(String(process.pid));
      if (p.name === 'change' && changeFile) {
        writeFileSync(changeFile, `${process.pid} ${Date.now()}\n`);
        return text(String(process.pid));
      }
      return { error: { code: -32602, message: `Unknown tool: ${p.name}` } };
    default:
      return { error: { code: -32601, message: `Method not found: ${message.method}` } };
  }
}

if (changeFile) {
  watchFile(changeFile, { interval: 20 }, (now, before) => {
    if (now.mtimeMs === before.mtimeMs) return;
    write({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
    if (announceLog) appendFileSync(announceLog, `ANNOUNCED ${process.pid}\n`);
  });
}

createInterface({ input: process.stdin }).on('line', (line) => {
  let message;
  try {
    message = JSON.parse(line);
  } catch {
    return;
  }
  if (message.id === undefined || message.method === undefined) return;
  // A listen stream stays open (never answered) until the gateway cancels it; changes arrive on stdout.
  if (message.method === 'subscriptions/listen') return;
  const result = answer(message);
  write(
    result.error ? { jsonrpc: '2.0', id: message.id, error: result.error } : { jsonrpc: '2.0', id: message.id, result },
  );
});
process.stdin.on('end', () => process.exit(0));
