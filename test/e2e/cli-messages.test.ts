// What a person sees when the command line or the config is wrong: the built program (as `npm start` and the
// container run it, not tsx), its exact stderr and its exit code. Every message says what to do next.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { assertBuilt } from '../built.js';
import { tempDir } from '../temp.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
// The dist/ `npm ci` built (test/built.ts refuses one older than the sources), as `npm start` runs it.
const CLI = path.join(ROOT, 'dist/src/cli.js');
const HELP_LINE = 'Run mcp-gateway --help for usage.';
const dir = tempDir('mcp-gw-messages-');

before(assertBuilt);

/** Runs the built gateway in `cwd` with only PATH in its environment; it must exit before it serves. */
function gateway(args: string[], cwd = dir): { status: number | null; lines: string[] } {
  const result = spawnSync(process.execPath, [CLI, ...args], {
    cwd,
    encoding: 'utf8',
    timeout: 20_000,
    env: { PATH: process.env.PATH },
  });
  return { status: result.status, lines: result.stderr.trimEnd().split('\n') };
}

function configFile(name: string, text: string): string {
  const file = path.join(dir, name);
  writeFileSync(file, text);
  return file;
}

test('--log-level loud is refused like any bad option, naming the valid levels', () => {
  const { status, lines } = gateway(['--log-level', 'loud', '--stdio', 'node server.js']);
  assert.equal(status, 2);
  assert.deepEqual(lines, [
    'mcp-gateway: --log-level must be one of fatal, error, warn, info, debug, trace, silent (got "loud")',
    HELP_LINE,
  ]);
});

test('a YAML syntax error shows the line it stopped at, with a caret under the column', () => {
  const file = configFile('syntax.yaml', 'servers:\n  a: { command: node, args: [x] }\n  b: c: d\n');
  const { status, lines } = gateway(['--config', file]);
  assert.equal(status, 2);
  assert.deepEqual(lines, [
    `mcp-gateway: ${file} is not valid YAML: Nested mappings are not allowed in compact mappings at line 3, column 6:`,
    '  2 |   a: { command: node, args: [x] }',
    '  3 |   b: c: d',
    '    |      ^',
    '  Quote a value that holds ": ", for example  key: "a: b"',
    HELP_LINE,
  ]);
});

test('no config file: says so with the path as resolved, how to create one, and that --stdio needs none', () => {
  const empty = tempDir('empty-', dir);
  const { status, lines } = gateway([], empty);
  assert.equal(status, 2);
  const example = path.join(ROOT, 'gateway.config.yaml');
  assert.deepEqual(lines, [
    `mcp-gateway: the config file ${path.join(empty, 'gateway.config.yaml')} does not exist (without --config, the ` +
      `gateway reads gateway.config.yaml in the current folder)`,
    `  To create it, start from the bundled example and list your servers in it: cp ${example} ` +
      `${path.join(empty, 'gateway.config.yaml')}`,
    `  Every key is described in ${path.join(ROOT, 'docs/configuration.md')}`,
    '  To use a file elsewhere: mcp-gateway --config FILE',
    '  To bridge one stdio server with no config file at all: mcp-gateway --stdio "node server.js"',
    HELP_LINE,
  ]);
  assert.ok(existsSync(example), 'the example the message points at is there');
});

test('a missing --config FILE is named as resolved against the current folder', () => {
  const { status, lines } = gateway(['--config', 'nowhere/gw.yaml']);
  assert.equal(status, 2);
  assert.equal(lines[0], `mcp-gateway: the config file ${path.join(dir, 'nowhere/gw.yaml')} does not exist`);
});

test('a server with neither command nor url is told it needs one of them, by name', () => {
  const file = configFile('empty-server.yaml', 'servers:\n  c: {}\n');
  const { status, lines } = gateway(['--config', file]);
  assert.equal(status, 2);
  assert.deepEqual(lines, [
    `mcp-gateway: ${file} is not a valid mcp-gateway config:`,
    '  - servers.c: a server needs either command: (a program the gateway runs over stdio), url: (a remote MCP ' +
      'endpoint) or openapi: (a REST API from its OpenAPI document), for example { command: node, args: ' +
      '[server.js] } or { url: "https://mcp.example.com/mcp" }',
    HELP_LINE,
  ]);
});

test('an unset variable, a wrong type and a clash between servers are reported together, in one pass', () => {
  const file = configFile(
    'three.yaml',
    'listen: { port: eighty }\nservers:\n  a: { command: node, env: { TOKEN: "${A_TOKEN_NOBODY_SET}" } }\n  a__b: { ' +
      'command: node }\n',
  );
  const { status, lines } = gateway(['--config', file]);
  assert.equal(status, 2);
  assert.deepEqual(lines, [
    `mcp-gateway: ${file} is not a valid mcp-gateway config:`,
    '  - servers.a.env.TOKEN: environment variable A_TOKEN_NOBODY_SET is not set; set it, or write ' +
      '${A_TOKEN_NOBODY_SET:-default}',
    '  - listen.port: Invalid input: expected number, received string',
    '  - servers.a and servers.a__b could give two tools the same name on /mcp ("a__" begins "a__b__"); set ' +
      'servers.a__b.prefix (or aggregate.separator) so that neither begins the other',
    HELP_LINE,
  ]);
});
