// ${file:path} in the config (issue 34, item 3): a secret mounted as a file (Docker's and Kubernetes'
// /run/secrets/<name>) is read at load, its trailing line break trimmed; a file that cannot be read is a load
// problem naming the file and the key; the file's contents never enter the gateway's environment, so no
// child inherits them, and a child gets one only where the operator wrote ${file:…} into its own env:.
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { childEnvironment } from '../../src/child-env.js';
import { parseConfig } from '../../src/config/config.js';
import { tempDir } from '../temp.js';
import { configProblems } from '../config-problems.js';
import { loadProblems } from './config-file-secrets-child.js';

const dir = tempDir('mcp-gw-file-secrets-');
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

function secret(name: string, contents: string): string {
  const file = path.join(dir, name);
  writeFileSync(file, contents);
  return file;
}

const child = { command: 'node', args: ['server.js'] };

test('a secret file is read at load, its trailing line break trimmed; ${VAR} beside it still works', () => {
  const key = secret('api-key', 'key-from-a-file-0123456789\n');
  const windows = secret('crlf', 'crlf-secret-0123456789abcdef\r\n');
  const config = parseConfig(
    {
      servers: { a: child },
      auth: { apiKeys: [{ key: `\${file:${key}}`, principal: 'alice' }] },
      mrtr: { secret: `\${file:${windows}}` },
      cache: { contextSecret: 'prefix-${CTX}' },
    },
    't',
    dir,
    { CTX: 'from-the-environment' },
  );
  assert.equal(
    config.auth?.apiKeys[0]?.sha256,
    createHash('sha256').update('key-from-a-file-0123456789').digest('hex'),
  );
  assert.equal(config.mrtr.secret, 'crlf-secret-0123456789abcdef');
  assert.equal(config.cache.contextSecret, 'prefix-from-the-environment');
  assert.deepEqual(config.envReads, ['CTX'], 'a file is not a variable the config reads');
});

test(
  'a relative path is read from the config file’s folder; inner spaces and newlines are kept; $${file:…} stays ' +
    'literal',
  () => {
    mkdirSync(path.join(dir, 'secrets'), { recursive: true });
    secret('secrets/multi', 'line one\nline two  \n\n');
    const config = parseConfig(
      { servers: { a: { ...child, env: { MULTI: '${file:secrets/multi}', LITERAL: '$${file:secrets/multi}' } } } },
      't',
      dir,
      {},
    );
    const server = config.servers.a!;
    assert.equal(server.transport, 'stdio');
    assert.equal(server.transport === 'stdio' && server.env.MULTI, 'line one\nline two  ');
    assert.equal(server.transport === 'stdio' && server.env.LITERAL, '${file:secrets/multi}');
  },
);

test('a missing file is a load error naming the file and the key, with every other problem', () => {
  const missing = path.join(dir, 'nowhere', 'token');
  const problems = configProblems(
    { servers: { a: { ...child, env: { TOKEN: `\${file:${missing}}` } } }, mrtr: { secret: '${UNSET_MRTR}' } },
    {},
    dir,
  );
  assert.equal(problems.length, 2, problems.join('\n'));
  assert.ok(
    problems.includes(
      `servers.a.env.TOKEN: cannot read the secret file ${missing} named by \${file:${missing}} (no such file); ` +
        `create it, make it readable by the gateway's user, or fix the path`,
    ),
    problems.join('\n'),
  );
  assert.ok(problems.some((p) => p.startsWith('mrtr.secret: environment variable UNSET_MRTR is not set')));
});

test('a folder, or a file the gateway may not read, is a load error saying so', () => {
  mkdirSync(path.join(dir, 'a-folder'), { recursive: true });
  assert.match(
    configProblems({ servers: { a: child }, mrtr: { secret: '${file:a-folder}' } }, {}, dir).join('\n'),
    /^mrtr\.secret: cannot read the secret file .*a-folder named by \$\{file:a-folder\} \(it is a folder\)/,
  );
  const locked = secret('locked', 'x');
  chmodSync(locked, 0o000);
  const problems = (name: string) =>
    problemsAsUnprivileged({ servers: { a: child }, mrtr: { secret: `\${file:${name}}` } });
  assert.match(
    problems('locked').join('\n'),
    /^mrtr\.secret: cannot read the secret file .*locked .*\(permission denied\)/,
  );
  chmodSync(secret('open', 'open-secret-0123456789abcdef'), 0o644);
  assert.deepEqual(problems('open'), [], 'the same user reads a file it may read: the refusal above was the file');
});

/**
 * The problems parseConfig finds in `raw` (read from `dir`), loaded by a process file permissions apply to: this
 * one, or (root reads any file, and CI runs as root) a child that is root without the capabilities that let root
 * pass file modes (util-linux's setpriv). Root stays the owner of every folder on the way, so the child reaches
 * the checkout and this Node wherever they are (a clone in a folder of mode 700 keeps another user out).
 */
function problemsAsUnprivileged(raw: unknown): string[] {
  if (process.getuid?.() !== 0) return loadProblems(raw, dir);
  const script =
    "const { loadProblems } = await import('./test/unit/config-file-secrets-child.ts');" +
    'console.log(JSON.stringify(loadProblems(JSON.parse(process.argv[1]), process.argv[2])));';
  const run = spawnSync(
    'setpriv',
    [
      '--bounding-set=-dac_override,-dac_read_search',
      '--',
      process.execPath,
      '--import',
      './test/ts-loader.mjs',
      '--input-type=module',
      '-e',
      script,
      JSON.stringify(raw),
      dir,
    ],
    { cwd: ROOT, encoding: 'utf8' },
  );
  assert.ok(!run.error, `setpriv (util-linux) runs the unprivileged child as root cannot: ${run.error?.message}`);
  assert.equal(run.status, 0, run.stderr);
  return JSON.parse(run.stdout);
}

test("no child inherits a file's contents: only a server whose own env: names it gets it", () => {
  const token = secret('gh-token', 'ghp-file-secret-value-0123\n');
  const config = parseConfig(
    {
      servers: {
        given: { ...child, env: { GITHUB_TOKEN: `\${file:${token}}` } },
        other: { ...child, inheritEnv: ['*'] },
      },
      mrtr: { secret: `\${file:${token}}` },
    },
    't',
    dir,
    {},
  );
  const parent = { ...process.env, PATH: '/usr/bin' };
  const envOf = (name: 'given' | 'other') => {
    const server = config.servers[name]!;
    assert.equal(server.transport, 'stdio');
    return server.transport === 'stdio'
      ? childEnvironment(parent, server.inheritEnv, new Set(config.envReads), server.env).env
      : {};
  };
  assert.equal(envOf('given').GITHUB_TOKEN, 'ghp-file-secret-value-0123');
  assert.ok(
    !Object.values(envOf('other')).includes('ghp-file-secret-value-0123'),
    'inheritEnv: ["*"] brought a file secret to a child',
  );
  assert.ok(
    !Object.values(process.env).includes('ghp-file-secret-value-0123'),
    'loading put a file secret into the environment',
  );
});
