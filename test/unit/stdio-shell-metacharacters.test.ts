// The attack: a stdio server's `command` and `args` with shell metacharacters in them (`;`, `$(…)`, backticks,
// `|`, `&&`, redirections, newlines, quotes, globs). The gateway runs the command itself, never through a
// shell, so each argument reaches the child exactly as written and none of them runs anything. Goes from the
// config file's values (parseConfig) to the spawn the gateway does (StdioProcess); the child records the
// arguments it got and exits, and a shell would have run each `touch` by the time that exit is seen (before
// the child for `$(…)` and backticks, beside it for `|`, after it for `;` and `&&`).
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { StdioProcess, type ExitInfo } from '../../bridge/stdio/stdio-process.js';
import { silentLog } from '../../infra/log.js';
import { parseConfig, type StdioServerConfig } from '../../src/config/config.js';
import { tempDir } from '../temp.js';

const dir = tempDir('mcp-gw-shell-');
const marker = (name: string) => path.join(dir, name);

/** Each would create its marker file if a shell ever saw it. */
const PAYLOADS = [
  `; touch ${marker('semicolon')}`,
  `$(touch ${marker('dollar')})`,
  `\`touch ${marker('backtick')}\``,
  `| touch ${marker('pipe')}`,
  `&& touch ${marker('and')}`,
  `|| touch ${marker('or')}`,
  `& touch ${marker('background')}`,
  `> ${marker('redirect')}`,
  `\ntouch ${marker('newline')}`,
  `'; touch ${marker('quote')}; '`,
  `"; touch ${marker('double-quote')}; "`,
  `${path.join(dir, '*')}`,
];

/** The child: writes the arguments it was given (after `-e script`) as JSON, then exits. */
const RECORDER =
  "require('fs').writeFileSync(process.env.ARGV_FILE, JSON.stringify(process.argv.slice(1))); process.exit(0)";

function stdioServer(command: string, args: string[]): StdioServerConfig {
  const raw = { servers: { s: { command, args, env: { ARGV_FILE: marker('argv.json') } } } };
  const server = parseConfig(raw, 'test.yaml', dir, {}).servers.s;
  assert.equal(server?.transport, 'stdio');
  return server as StdioServerConfig;
}

function runToExit(server: StdioServerConfig): Promise<ExitInfo> {
  const child = new StdioProcess(server, silentLog, { message() {}, oversized() {}, exit() {} });
  return child.exited;
}

test('shell metacharacters in args reach the child literally and never run anything', async () => {
  const server = stdioServer(process.execPath, ['-e', RECORDER, ...PAYLOADS]);
  assert.deepEqual(server.args.slice(2), PAYLOADS, 'the config loader keeps them as written');

  const exit = await runToExit(server);
  assert.deepEqual([exit.code, exit.spawnError], [0, undefined]);
  assert.deepEqual(JSON.parse(readFileSync(marker('argv.json'), 'utf8')), PAYLOADS);
  assert.deepEqual(readdirSync(dir), ['argv.json'], 'no payload created its file');
});

test('a command with shell syntax in it is a program name, never a shell line', async () => {
  for (const command of [`node -e 1; touch ${marker('command')}`, `$(touch ${marker('command-dollar')})`]) {
    const exit = await runToExit(stdioServer(command, []));
    assert.ok(exit.spawnError, `${command}: reported as a command that cannot start`);
  }
  assert.ok(!existsSync(marker('command')) && !existsSync(marker('command-dollar')), readdirSync(dir).join(', '));
});
