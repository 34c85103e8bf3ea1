// The peers bench's table for the closing figures: latency and throughput of each peer against the floor,
// per concurrency level, as Markdown rows.
import type { PeerKey, PeersResult } from './peers.js';

const f = (n: number, digits = 2) => (Number.isFinite(n) ? n.toFixed(digits) : '–');

export function peersTable(result: PeersResult): string[] {
  const { rows } = result;
  const find = (key: PeerKey, c: number) => rows.find((r) => r.key === key && r.concurrency === c)?.result;
  const levels = [...new Set(rows.map((r) => r.concurrency))];
  const ratio = (c: number) => {
    const g = find('gateway', c),
      fl = find('floor', c),
      p = find('mcp-proxy', c);
    if (!g || !fl || !p) return `| ${c} | – | – | – | – |`;
    return (
      `| ${c} | +${f(g.p50Ms - fl.p50Ms, 3)} ms | ×${f(g.callsPerSecond / fl.callsPerSecond)} | ` +
      `×${f(g.callsPerSecond / p.callsPerSecond)} | ×${f(g.p50Ms / p.p50Ms)} |`
    );
  };
  return [
    '| path | clients | calls | p50 ms | p99 ms | calls/s | errors |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...rows.map(
      ({ path, concurrency, result: r }) =>
        `| ${path} | ${concurrency} | ${r.calls}${r.timedOut ? ' (deadline)' : ''} | ${f(r.p50Ms, 3)} | ` +
        `${f(r.p99Ms)} | ${f(r.callsPerSecond, 0)} | ${r.errors} |`,
    ),
    '',
    '| clients | gateway p50 − floor p50 | gateway ÷ floor calls/s | gateway ÷ mcp-proxy calls/s | gateway ÷ ' +
      'mcp-proxy p50 |',
    '| ---: | ---: | ---: | ---: | ---: |',
    ...levels.map(ratio),
    '',
    'tools/list, 16 clients, 5,000 lists after a 5,000-list warm-up:',
    '',
    '| server | tools | p50 ms | p99 ms | lists/s | errors |',
    '| --- | ---: | ---: | ---: | ---: | ---: |',
    ...result.lists.map(
      (l) =>
        `| ${l.label} | ${l.tools} | ${f(l.result.p50Ms)} | ${f(l.result.p99Ms)} | ${f(l.result.callsPerSecond, 0)} ` +
        `| ${l.result.errors} |`,
    ),
    '',
    'Server RSS after its runs (VmRSS of the server process, not its children): ' +
      Object.entries(result.rssMb)
        .map(([k, v]) => `${k} ${f(v, 1)} MB`)
        .join(', '),
    '',
    'How each path was started (cwd: the repository; every server on 127.0.0.1):',
    '',
    ...Object.entries(result.commands).map(
      ([k, v]) =>
        `- ${k}: \`${v}\`` +
        (k === 'stdio' ? ' (the bench writes JSON lines to its stdin and reads its stdout, multiplexed by id)' : ''),
    ),
    '',
    ...result.notes.map((n) => `- ${n}`),
  ];
}
