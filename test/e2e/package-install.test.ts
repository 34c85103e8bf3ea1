// The package as a user installs it (issue 36): `npm pack` in a fresh copy of the repository (its tracked
// files only), installed with npm into an empty folder, runs with its documented command. The install is
// offline: its lockfile is the repository's production entries, whose tarballs `npm ci` left in npm's cache,
// so nothing leaves this machine. Also: a free npm name, the metadata, no .map files pointing at sources the
// package lacks, and no reference servers in a production install.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { before, test } from 'node:test';
import { PACKAGE_NAME } from '../../infra/version.js';
import { ROOT } from './harness.js';
import { assertBuilt } from '../built.js';
import { tempDir } from '../temp.js';

interface PackageJson {
  name: string;
  version: string;
  license: string;
  bin: Record<string, string>;
  engines: Record<string, string>;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
  repository?: { url?: string };
  homepage?: string;
  bugs?: { url?: string };
  author?: string;
}
const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as PackageJson;
const REFERENCE_SERVERS = ['@modelcontextprotocol/server-everything', '@modelcontextprotocol/server-memory'];

const work = tempDir('mcp-gw-pack-');
const installed = path.join(work, 'install');
let packedFiles: string[] = [];

function run(command: string, args: string[], cwd: string): string {
  const result = spawnSync(command, args, {
    cwd,
    encoding: 'utf8',
    timeout: 170_000,
    env: { ...process.env, npm_config_update_notifier: 'false' },
  });
  assert.equal(result.status, 0, `${command} ${args.join(' ')} in ${cwd}:\n${result.stdout}\n${result.stderr}`);
  return result.stdout;
}

before(() => {
  // A fresh copy: the tracked files as they stand, and the dependencies `npm ci` installed.
  const copy = path.join(work, 'copy');
  const tracked = run('git', ['ls-files', '-z'], ROOT).split('\0').filter(Boolean);
  for (const file of tracked) {
    mkdirSync(path.dirname(path.join(copy, file)), { recursive: true });
    try {
      cpSync(path.join(ROOT, file), path.join(copy, file));
    } catch {
      // deleted in the working tree and not committed yet
    }
  }
  symlinkSync(path.join(ROOT, 'node_modules'), path.join(copy, 'node_modules'));
  // The dist/ `npm ci` built (test/built.ts), packed as it is: --ignore-scripts keeps `prepare` from building it
  // again. dist/ is not tracked, so it is copied beside the tracked files.
  assertBuilt();
  cpSync(path.join(ROOT, 'dist'), path.join(copy, 'dist'), { recursive: true });
  const packed = JSON.parse(run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', work], copy)) as {
    filename: string;
    files: { path: string }[];
  }[];
  packedFiles = packed[0]!.files.map((file) => file.path);
  const tarball = `file:../${packed[0]!.filename}`;
  // What `npm install <tarball>` resolves, pinned: the package itself and the production entries of our lockfile.
  const lock = JSON.parse(readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { dev?: boolean; devOptional?: boolean }>;
  };
  const packages: Record<string, unknown> = {
    '': { dependencies: { [pkg.name]: tarball } },
    [`node_modules/${pkg.name}`]: {
      version: pkg.version,
      resolved: tarball,
      license: pkg.license,
      dependencies: pkg.dependencies,
      bin: pkg.bin,
      engines: pkg.engines,
    },
  };
  for (const [where, entry] of Object.entries(lock.packages))
    if (where && !entry.dev && !entry.devOptional) packages[where] = entry;
  mkdirSync(installed);
  writeFileSync(
    path.join(installed, 'package.json'),
    JSON.stringify({ private: true, dependencies: { [pkg.name]: tarball } }),
  );
  writeFileSync(
    path.join(installed, 'package-lock.json'),
    JSON.stringify({ name: 'install', lockfileVersion: 3, requires: true, packages }),
  );
  run('npm', ['ci', '--offline', '--no-audit', '--no-fund'], installed);
});

test('the npm name is not the one another package holds, and the package says where it comes from', () => {
  assert.notEqual(pkg.name, 'mcp-gateway', 'npx mcp-gateway runs another package');
  assert.equal(pkg.name, PACKAGE_NAME, 'infra/version.ts reads the version from the package of this name');
  assert.ok(pkg.bin['mcp-gateway'] && pkg.bin[pkg.name], 'the documented command, and npx <name>');
  for (const key of ['homepage', 'author'] as const) assert.ok(pkg[key], `package.json lacks ${key}`);
  assert.match(pkg.repository?.url ?? '', /^git\+https:\/\//);
  assert.match(pkg.bugs?.url ?? '', /^https:\/\//);
  const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  assert.match(readme, new RegExp(`npm install -g ${pkg.name}\\b`), 'README says how to install it');
  assert.match(readme, new RegExp(`npx ${pkg.name}\\b`));
});

test('the installed command runs: --version, --help, and a gateway that answers /healthz', async () => {
  const bin = path.join(installed, 'node_modules', '.bin');
  for (const command of ['mcp-gateway', pkg.name]) {
    assert.equal(run(path.join(bin, command), ['--version'], installed), `${pkg.version}\n`);
  }
  assert.match(run(path.join(bin, 'mcp-gateway'), ['--help'], installed), /\/healthz/);
  // The documented one-server form, with a server of the user's own (a fixture), on a free port.
  const { spawn } = await import('node:child_process');
  const server = path.join(ROOT, 'test/fixtures/faulty-server.mjs');
  const child = spawn(path.join(bin, 'mcp-gateway'), ['--stdio', `node ${server}`, '--port', '0'], {
    cwd: installed,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  try {
    let log = '';
    const url = await new Promise<string>((resolve, reject) => {
      child.stderr.on('data', (chunk: Buffer) => {
        log += chunk.toString();
        const found = /"url":"(http:\/\/127\.0\.0\.1:\d+)/.exec(log) ?? /(http:\/\/127\.0\.0\.1:\d+)/.exec(log);
        if (found) resolve(found[1]!);
      });
      child.once('exit', (code) => reject(new Error(`the gateway exited (${code}): ${log}`)));
    });
    const health = await fetch(`${url}/healthz`);
    assert.equal(health.status, 200);
  } finally {
    child.kill('SIGTERM');
  }
});

test('the package ships no .map files (they pointed at sources it does not hold), and no tests or sources', () => {
  assert.deepEqual(
    packedFiles.filter((file) => file.endsWith('.map')),
    [],
  );
  assert.deepEqual(
    packedFiles.filter((file) => /^(test|bench|src|scripts)\//.test(file)),
    [],
  );
});

test(
  'a production install carries neither reference server; ' + 'pino-pretty is there, so --log-format pretty works',
  () => {
    for (const name of REFERENCE_SERVERS) {
      assert.equal(pkg.dependencies[name], undefined, `${name} is a dependency of every install`);
      assert.ok(pkg.devDependencies[name], `${name}: a clone's npm ci installs it, so npm start serves it`);
    }
    const modules = path.join(installed, 'node_modules');
    for (const name of REFERENCE_SERVERS) assert.throws(() => readFileSync(path.join(modules, name, 'package.json')));
    assert.ok(pkg.dependencies['pino-pretty'], 'pino-pretty is a dependency');
    const result = spawnSync(
      path.join(modules, '.bin', 'mcp-gateway'),
      ['--log-format', 'pretty', '--stdio', 'node -e "process.exit(3)"', '--port', '0'],
      {
        cwd: installed,
        encoding: 'utf8',
        timeout: 30_000,
      },
    );
    assert.doesNotMatch(result.stderr, /needs the pino-pretty package/);
    assert.doesNotMatch(result.stderr, /^\{"level"/m, 'lines are pretty, not JSON');
  },
);
