// perCaller under load (issue 34): 50 principals, three calls each, on a gateway in a process of its own.
// Every call must be answered by its own principal's child (the faulty-server fixture answers its pid;
// each pid is a child of the gateway, the same for a principal's three calls and distinct across them),
// and the gateway's own memory must grow by at most 1 MB per child: RSS after a full GC, measured in the
// gateway process only, after one caller warmed the path and again after all 50 have their children.
import assert from 'node:assert/strict';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';
import { launchGateway, type ChildGateway } from './child-gateway.js';
import { request, ROOT, send } from './harness.js';
import { tempDir } from '../temp.js';

const PRINCIPALS = Array.from({ length: 50 }, (_, index) => `p${String(index).padStart(2, '0')}`);
const CALLS_EACH = 3;
/** Principals calling at once: all 50 children still run together, their start-ups merely overlap less. */
const AT_ONCE = 10;
const keyOf = (principal: string): string => `${principal}-key-0123456789abcdef`;
const dir = tempDir('mcp-gw-per-caller-load-');
let gateway: ChildGateway | undefined;

after(async () => {
  await gateway?.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function pid(principal: string): Promise<number> {
  const body = request('tools/call', { name: 'pid', arguments: {} });
  const answer = await send(`${gateway!.base}/servers/own/mcp`, body, { authorization: `Bearer ${keyOf(principal)}` });
  assert.equal(answer.status, 200, `${principal}: ${JSON.stringify(answer.body)}`);
  return Number(answer.body.result.content[0].text);
}

function parentOf(pid: number): number {
  // /proc/<pid>/stat: "pid (comm) state ppid ..."; comm may hold spaces, so read after its closing paren.
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
}

const mb = (bytes: number): string => (bytes / 2 ** 20).toFixed(1);

test(
  '50 principals × 3 calls: each answered by its own child; ' + 'the gateway grows by at most 1 MB per child',
  async () => {
    const config = path.join(dir, 'gateway.json');
    writeFileSync(
      config,
      JSON.stringify({
        listen: { port: 0 },
        log: { level: 'warn' },
        servers: {
          own: {
            command: process.execPath,
            args: ['test/fixtures/faulty-server.mjs'],
            cwd: ROOT,
            era: 'modern',
            perCaller: true,
            maxCallers: PRINCIPALS.length,
          },
        },
        auth: { apiKeys: PRINCIPALS.map((principal) => ({ key: keyOf(principal), principal })) },
      }),
    );
    gateway = await launchGateway(config);
    // The first caller's child and a few calls warm the request path, so the baseline holds its code.
    const first = PRINCIPALS[0]!;
    for (let i = 0; i < 5; i++) await pid(first);
    const baseline = await gateway.memory();

    const seen = new Map<string, number[]>();
    for (let start = 0; start < PRINCIPALS.length; start += AT_ONCE) {
      await Promise.all(
        PRINCIPALS.slice(start, start + AT_ONCE).map(async (principal) => {
          const pids: number[] = [];
          for (let i = 0; i < CALLS_EACH; i++) pids.push(await pid(principal));
          seen.set(principal, pids);
        }),
      );
    }
    const loaded = await gateway.memory();
    const again = await gateway.memory();

    const owners = new Map<number, string>();
    for (const [principal, pids] of seen) {
      assert.equal(new Set(pids).size, 1, `${principal}'s calls reached one child: ${pids}`);
      const own = pids[0]!;
      assert.equal(owners.get(own), undefined, `${principal} reached ${owners.get(own)}'s child`);
      owners.set(own, principal);
      assert.equal(parentOf(own), gateway.child.pid, `${own} is a child of the gateway`);
    }
    assert.equal(owners.size, PRINCIPALS.length, 'one child per principal');

    const grown = Math.min(loaded.rss, again.rss) - baseline.rss;
    const perChild = grown / (PRINCIPALS.length - 1);
    console.log(
      `gateway rss ${mb(baseline.rss)} MB with 1 child, ${mb(loaded.rss)} / ${mb(again.rss)} MB with ` +
        `${PRINCIPALS.length}: ${(perChild / 1024).toFixed(0)} KB per child`,
    );
    assert.ok(
      perChild <= 2 ** 20,
      `the gateway grew by ${mb(perChild)} MB per child (rss ${mb(baseline.rss)} → ${mb(loaded.rss)} MB)`,
    );
  },
);
