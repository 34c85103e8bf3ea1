// --log-format as a user runs it (issue #19): JSON lines on stderr by default, pino-pretty's lines for a
// person with `--log-format pretty` (no colours when stderr is no terminal), and a format that does not
// exist refused with the ones that do.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { post, request, ROOT } from './harness.js';
import { compiledFixture } from '../compiled-fixtures.js';
import { gatewayCli } from '../built.js';

const CLI = gatewayCli(); // dist/ when it matches the sources, as a user runs it
const SOLO = ['--stdio', `${process.execPath} ${compiledFixture('modern-server')}`, '--name', 'solo', '--port', '0'];

/**
 * Runs the CLI until it logs solo's endpoint (matched by `endpoint`), calls a tool there, stops it; its stderr and exit
 * code.
 */
async function runUntilServing(extra: string[], endpoint: RegExp): Promise<{ stderr: string; code: number | null }> {
  const child = spawn(process.execPath, [...CLI, ...SOLO, ...extra], {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    // A deadline for a loaded machine, not an expectation.
    const timer = setTimeout(() => reject(new Error(`no endpoint logged:\n${stderr}`)), 60_000);
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
      const match = endpoint.exec(stderr);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    });
    child.once('exit', () => reject(new Error(`exited before serving:\n${stderr}`)));
  });
  const answer = await post(url, request('tools/call', { name: 'echo', arguments: { text: 'logged' } }));
  assert.equal(answer.body.result.content[0].text, 'logged');
  child.kill('SIGTERM');
  return { stderr, code: await exited };
}

test('JSON lines by default: one object per line, with level, time and msg', async () => {
  const { stderr, code } = await runUntilServing([], /"endpoint":"(http:\/\/127\.0\.0\.1:\d+\/servers\/solo\/mcp)"/);
  assert.equal(code, 0);
  const lines = stderr.trim().split('\n');
  assert.ok(lines.length >= 2);
  for (const line of lines) {
    const entry = JSON.parse(line);
    assert.equal(typeof entry.level, 'number', line);
    assert.equal(typeof entry.time, 'number', line);
    assert.equal(typeof entry.msg, 'string', line);
  }
  assert.ok(lines.some((l) => JSON.parse(l).msg === 'serving solo'));
});

test(
  '--log-format pretty: "[time] LEVEL (name): ' + 'message" and the fields indented below, no colours off a terminal',
  async () => {
    const { stderr, code } = await runUntilServing(
      ['--log-format', 'pretty'],
      /endpoint: "(http:\/\/127\.0\.0\.1:\d+\/servers\/solo\/mcp)"/,
    );
    assert.equal(code, 0);
    const lines = stderr.trim().split('\n');
    const heads = lines.filter((l) => !l.startsWith(' '));
    assert.ok(heads.length >= 2, stderr);
    for (const head of heads)
      assert.match(head, /^\[\d\d:\d\d:\d\d\.\d{3}\] (TRACE|DEBUG|INFO|WARN|ERROR|FATAL) \(mcp-gateway(\/\d+)?\): \S/);
    assert.ok(heads.some((l) => /\] INFO \(mcp-gateway(\/\d+)?\): serving solo$/.test(l)));
    assert.ok(lines.some((l) => /^ {4}endpoint: "http:\/\/127\.0\.0\.1:\d+\/servers\/solo\/mcp"$/.test(l)));
    for (const line of lines) assert.throws(() => JSON.parse(line), `not a JSON line: ${line}`);
    assert.ok(!stderr.includes('\u001b['), 'no ANSI colours when stderr is not a terminal');
  },
);

test('an unknown --log-format exits 2 naming the formats there are', () => {
  const result = spawnSync(process.execPath, [...CLI, ...SOLO, '--log-format', 'xml'], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 60_000,
  });
  assert.equal(result.status, 2);
  assert.match(result.stderr, /--log-format must be one of json, pretty \(got "xml"\)/);
});
