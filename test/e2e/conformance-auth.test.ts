// The official conformance suite's client-side auth scenarios (@modelcontextprotocol/conformance, every `auth/*`
// client scenario its CLI lists), with the gateway as the client: for each, the suite's CLI starts the scenario's MCP
// server and authorization server on loopback and runs conformance-relay.mjs, which hands the server's URL to this
// process; here the gateway calls it, Chromium confirms the connect link (conformance-client.ts), and the suite
// judges what the gateway did. A scenario passes when the suite does: no check failed or warned, the client exited
// as the scenario allows. conformance-preload.mjs keeps the CLI on Node 20 and on loopback, and refuses (and
// reports) any connection elsewhere.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { chromium } from '../services.js';
import { tempDir } from '../temp.js';
import { scaled } from '../timing.js';
import { type ScenarioRun, runClient } from './conformance-client.js';
import { launchChromium } from './connect-browser.js';
import { ROOT } from './harness.js';
import './conformance-preload.mjs';

const browserNeed = await chromium('the conformance auth scenarios, whose connect links Chromium confirms');
const CLI = path.join(ROOT, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');
const PRELOAD = path.join(ROOT, 'test/e2e/conformance-preload.mjs');
const RELAY = path.join(ROOT, 'test/e2e/conformance-relay.mjs');

/** Every client scenario of the package whose name starts auth/, as its CLI lists them. */
const listing = execFileSync(process.execPath, ['--import', PRELOAD, CLI, 'list', '--client'], { encoding: 'utf8' });
const scenarios = [...listing.matchAll(/^\s+- (auth\/\S+)/gm)].map((m) => m[1]!);

/**
 * Scenarios the gateway does not implement, and why. Each is still run and must still fail: one that passes is a stale
 * entry, and its test says to remove it (as the suite's own expected-failures baseline works).
 */
const NOT_IMPLEMENTED: Record<string, string> = {};

interface Check {
  id: string;
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO' | 'SKIPPED';
  description: string;
  errorMessage?: string;
}

// Three scenarios at a time (each its own gateway, servers and browser context): one after another, the 22 took
// 6.5 min beside other work, beyond the runner's 300 s for a file; three at a time, 3 min.
describe("the conformance suite's auth scenarios, with the gateway as the client", {
  skip: browserNeed.skip,
  concurrency: 3,
}, () => {
  let browser: Browser;
  let control: Server;
  let controlUrl: string;

  before(async () => {
    browserNeed.check();
    browser = await launchChromium(browserNeed.path!);
    control = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => (body += chunk));
      req.on('end', async () => {
        // A gateway that does not even start is the client failing, with its reason where the test shows it.
        const outcome = await runClient(browser, JSON.parse(body) as ScenarioRun).catch((error: Error) => ({
          exitCode: 1,
          steps: [{ what: 'failed', at: 0, detail: String(error.stack ?? error) }],
        }));
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(outcome));
      });
    });
    await new Promise<void>((resolve) => control.listen(0, '127.0.0.1', resolve));
    controlUrl = `http://127.0.0.1:${(control.address() as AddressInfo).port}/run`;
  });

  after(async () => {
    control?.close();
    await browser?.close();
  });

  test('the package lists its auth scenarios, each run below (a new one is run, and must pass, too)', () => {
    assert.ok(
      ['auth/metadata-default', 'auth/metadata-var2', 'auth/pre-registration'].every((s) => scenarios.includes(s)),
      `the CLI's list was not read: ${listing}`,
    );
    const gone = Object.keys(NOT_IMPLEMENTED).filter((s) => !scenarios.includes(s));
    assert.deepEqual(gone, [], 'NOT_IMPLEMENTED names scenarios the package no longer has: remove them');
  });

  for (const scenario of scenarios) {
    const why = NOT_IMPLEMENTED[scenario];
    test(why ? `${scenario} (not implemented: ${why})` : scenario, async () => {
      const out = tempDir('conformance-results-');
      const cli = spawn(
        process.execPath,
        [
          ...['--import', PRELOAD, CLI, 'client', '--scenario', scenario],
          ...['--command', `${process.execPath} ${RELAY}`, '--timeout', String(scaled(60_000)), '-o', out],
        ],
        { cwd: out, env: { ...process.env, CONFORMANCE_CONTROL: controlUrl }, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let output = '';
      cli.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
      cli.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
      const code = await new Promise<number | null>((resolve) => cli.once('exit', resolve));

      const refused = output.split('\n').filter((line) => line.startsWith('conformance-preload: refused'));
      assert.deepEqual(refused, [], 'nothing leaves loopback');
      const results = path.join(out, ...scenario.split('/').slice(0, -1));
      const [dir] = readdirSync(results).filter((name) => name.startsWith(path.basename(scenario)));
      assert.ok(dir, `the suite wrote no results for ${scenario}:\n${output.slice(-4000)}`);
      const checks = JSON.parse(readFileSync(path.join(results, dir, 'checks.json'), 'utf8')) as Check[];
      const client = readFileSync(path.join(results, dir, 'stdout.txt'), 'utf8');
      if (why) {
        const passed = code === 0 && checks.every((c) => c.status !== 'FAILURE' && c.status !== 'WARNING');
        assert.ok(!passed, `${scenario} passes now: remove it from NOT_IMPLEMENTED and from docs/security.md`);
        return;
      }
      const wrong = checks
        .filter((c) => c.status === 'FAILURE' || c.status === 'WARNING')
        .map((c) => `${c.status} ${c.id}: ${c.errorMessage ?? c.description}`);
      assert.deepEqual(wrong, [], `what the gateway did:\n${client}`);
      assert.equal(code, 0, `the suite's verdict:\n${output.slice(-3000)}\nwhat the gateway did:\n${client}`);
    });
  }
});
