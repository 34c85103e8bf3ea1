// The container image without a container engine: the Dockerfile copies what the build needs and nothing
// .dockerignore leaves out, and its default command, run here in a folder laid out like the image's /app,
// refuses in one line without MCP_GATEWAY_API_KEY and otherwise serves the bundled servers behind that key.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { before, test } from 'node:test';
import { read } from './deploy-helpers.js';
import { headersFor, post, request, ROOT, until, send } from './harness.js';
import { assertBuilt } from '../built.js';
import { onFreePort } from '../ports.js';
import { tempDir } from '../temp.js';

const dockerfile = read('Dockerfile');
const stages = dockerfile.split(/^FROM /m).slice(1);
const copies = (stage: string) =>
  [...stage.matchAll(/^COPY (?!--from)(.+)$/gm)].flatMap((m) => m[1]!.trim().split(/\s+/).slice(0, -1));
const ignored = read('.dockerignore')
  .split('\n')
  .map((line) => line.trim())
  .filter((line) => line && !line.startsWith('#'));
const defaultCommand = JSON.parse(/^CMD (\[.+\])$/m.exec(dockerfile)![1]!) as string[];

test(
  'the build stage copies every folder tsconfig.build.json compiles; every COPY source exists and is not ' +
    '.dockerignored',
  () => {
    const include = (JSON.parse(read('tsconfig.build.json')) as { include: string[] }).include;
    assert.deepEqual(
      include.filter((folder) => !copies(stages[0]!).includes(folder)),
      [],
      'add a COPY for each folder the build compiles',
    );
    for (const source of [...copies(stages[0]!), ...copies(stages[1]!)]) {
      assert.ok(existsSync(path.join(ROOT, source)), `COPY ${source}: no such file`);
      assert.ok(
        !ignored.some((pattern) => source === pattern || source.startsWith(`${pattern}/`)),
        `COPY ${source} is excluded by .dockerignore`,
      );
    }
    for (const heavy of ['node_modules', 'dist', '.git', 'test', 'bench'])
      assert.ok(ignored.includes(heavy), `.dockerignore leaves out ${heavy}`);
  },
);

test('the image listens on all interfaces on the port it exposes and health-checks /healthz', () => {
  const port = /^ENV .*MCP_GATEWAY_PORT=(\d+)/m.exec(stages[1]!)![1];
  assert.match(stages[1]!, new RegExp(`^EXPOSE ${port}$`, 'm'));
  assert.match(stages[1]!, /^ENV .*MCP_GATEWAY_HOST=0\.0\.0\.0/m);
  assert.match(stages[1]!, /HEALTHCHECK[\s\S]*\/healthz/);
});

// What the image's build stage compiles lies inside what it copies. The stage copies the tsconfig files and
// the folders tsconfig.build.json includes (first test), then runs `npm run build`; that build also compiles any
// file outside those folders that one inside imports (a relative import of ../scripts/x.ts, a JSON file), which
// the stage lacks, and the image build then fails. tsc --listFilesOnly names every file the build reads without
// compiling anything (the one type-check of the run, `npm run typecheck`, proves the same folders compile).
test('every file the build stage compiles is under a folder or among the files the stage copies', () => {
  const listed = spawnSync(path.join(ROOT, 'node_modules/.bin/tsc'), ['-p', 'tsconfig.build.json', '--listFilesOnly'], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 120_000,
  });
  assert.equal(listed.status, 0, listed.stdout + listed.stderr);
  const copied = copies(stages[0]!);
  const ours = listed.stdout
    .split('\n')
    .filter(Boolean)
    .map((file) => path.relative(ROOT, path.resolve(ROOT, file)))
    .filter((file) => !file.startsWith('node_modules/'));
  assert.ok(
    ours.some((file) => file.startsWith('src/')),
    `tsc listed no source of ours:\n${listed.stdout}`,
  );
  const outside = ours.filter((file) => !copied.some((source) => file === source || file.startsWith(`${source}/`)));
  assert.deepEqual(outside, [], 'the image build compiles these but the build stage does not COPY them');
});

// The image's /app: package.json, node_modules, the dist/ `npm ci` built (as the image's build stage runs
// `npm run build`: tsconfig.build.json; test/built.ts checks it is not older than the sources), and the config
// the Dockerfile copies. A copy, so the program finds this folder's package.json and config as in the image.
let app: string;
before(() => {
  app = tempDir('mcp-gw-image-');
  assertBuilt();
  cpSync(path.join(ROOT, 'dist'), path.join(app, 'dist'), { recursive: true });
  symlinkSync(path.join(ROOT, 'node_modules'), path.join(app, 'node_modules'));
  assert.match(stages[1]!, /^COPY package\.json package-lock\.json \.\/$/m);
  for (const file of ['package.json', 'package-lock.json']) copyFileSync(path.join(ROOT, file), path.join(app, file));
  assert.match(stages[1]!, /^COPY deploy\/container\.config\.yaml \.\/$/m);
  copyFileSync(path.join(ROOT, 'deploy/container.config.yaml'), path.join(app, 'container.config.yaml'));
});

const environment = (extra: Record<string, string>): NodeJS.ProcessEnv => {
  const { MCP_GATEWAY_API_KEY: _drop, ...rest } = process.env;
  return { ...rest, MCP_GATEWAY_HOST: '127.0.0.1', ...extra };
};

for (const [why, key] of [
  ['unset', undefined],
  ['shorter than 16 characters', 'short-key'],
] as const) {
  test(`started with no arguments and MCP_GATEWAY_API_KEY ${why}, it refuses in one line naming the variable`, () => {
    const result = spawnSync(defaultCommand[0]!, defaultCommand.slice(1), {
      cwd: app,
      env: environment(key ? { MCP_GATEWAY_API_KEY: key } : {}),
      encoding: 'utf8',
      timeout: 20_000,
    });
    assert.equal(result.status, 2);
    assert.equal(result.stderr.trimEnd().split('\n').length, 1, result.stderr);
    assert.match(result.stderr, /MCP_GATEWAY_API_KEY/);
  });
}

test(
  'started with no arguments and a key, it serves both bundled servers to callers with the key only, and stops ' +
    'on SIGTERM',
  async () => {
    const key = 'image-default-key-0123456789';
    // MCP_GATEWAY_PORT is set before the gateway starts: a port some other process takes first is tried again.
    const { port, gateway, exited, stderr } = await onFreePort(async (port) => {
      const gateway = spawn(defaultCommand[0]!, defaultCommand.slice(1), {
        cwd: app,
        env: environment({ MCP_GATEWAY_API_KEY: key, MCP_GATEWAY_PORT: String(port) }),
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let text = '';
      gateway.stderr.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      const exited = new Promise<number | null>((resolve) => gateway.once('exit', (code) => resolve(code)));
      const ready = await until(
        async () =>
          gateway.exitCode !== null ||
          (await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined))?.status === 200,
        30_000,
        100,
      );
      if (!ready || gateway.exitCode !== null) {
        gateway.kill('SIGKILL');
        throw new Error(`the gateway did not become ready:\n${text}`);
      }
      return { port, gateway, exited, stderr: () => text };
    });
    try {
      const base = `http://127.0.0.1:${port}`;
      const list = request('tools/list');
      assert.equal((await post(`${base}/mcp`, list, headersFor(list))).status, 401);
      const answer = await send(`${base}/mcp`, list, { authorization: `Bearer ${key}` });
      assert.equal(answer.status, 200);
      const names: string[] = answer.body.result.tools.map((tool: { name: string }) => tool.name);
      assert.ok(
        names.some((n) => n.startsWith('everything__')) && names.some((n) => n.startsWith('memory__')),
        names.join(', '),
      );
    } finally {
      gateway.kill('SIGTERM');
    }
    assert.equal(await exited, 0, stderr());
  },
);
