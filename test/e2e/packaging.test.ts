// What `npm install mcp-gateway` gives a user: the built binary and its --version, the files the package
// holds (dist and docs, no tests or bench), the license, and the Node.js versions it declares.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { before, test } from 'node:test';
import { ROOT } from './harness.js';
import { assertBuilt } from '../built.js';
import { tempDir } from '../temp.js';

interface PackageJson {
  version: string;
  license: string;
  bin: Record<string, string>;
  engines: { node: string };
  dependencies: Record<string, string>;
}
const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as PackageJson;

// The dist/ `npm ci` built (test/built.ts): this file checks it, and never builds it again.
before(assertBuilt);

test("the built binary prints package.json's version, from any folder, without a config", () => {
  const bin = path.join(ROOT, pkg.bin['mcp-gateway']!);
  assert.match(readFileSync(bin, 'utf8').split('\n')[0]!, /^#!\/usr\/bin\/env node$/);
  for (const flag of ['--version', '-v']) {
    const result = spawnSync(process.execPath, [bin, flag], {
      cwd: tempDir('mcp-gw-version-'),
      encoding: 'utf8',
      timeout: 20_000,
    });
    assert.equal(result.status, 0, result.stderr);
    assert.equal(result.stdout, `${pkg.version}\n`);
  }
});

// --ignore-scripts: no `prepare`, so no build; the package is the dist/ as built.
test('npm pack holds dist, docs, the config and its schema, and no tests, bench or sources', () => {
  const pack = spawnSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: ROOT, encoding: 'utf8' });
  assert.equal(pack.status, 0, pack.stderr);
  const files = (JSON.parse(pack.stdout) as { files: { path: string }[] }[])[0]!.files.map((file) => file.path);
  for (const wanted of [
    'package.json',
    'README.md',
    'LICENSE',
    'gateway.config.yaml',
    'gateway.config.schema.json',
    'docs/configuration.md',
    'docs/deployment.md',
    pkg.bin['mcp-gateway']!,
    'dist/bridge/upstream.js',
    'dist/policy/allow-list.js',
    'dist/cache/list-cache.js',
  ]) {
    assert.ok(files.includes(wanted), `the package lacks ${wanted}`);
  }
  const unwanted = files.filter(
    (file) =>
      /^(test|bench|scripts|src|bridge|policy|cache|deploy|\.ci|dist\/test|dist\/bench)\//.test(file) ||
      /(?<!\.d)\.ts$/.test(file),
  );
  assert.deepEqual(unwanted, []);
});

test('LICENSE is the Apache License 2.0 text, as package.json says', () => {
  assert.equal(pkg.license, 'Apache-2.0');
  // SHA-256 of https://www.apache.org/licenses/LICENSE-2.0.txt, unmodified.
  const digest = createHash('sha256')
    .update(readFileSync(path.join(ROOT, 'LICENSE')))
    .digest('hex');
  assert.equal(digest, 'cfc7749b96f63bd31c3c42b5c471bf756814053e847c10f3eb003417bc523d30');
});

test('engines.node admits no Node.js version that a production dependency refuses', () => {
  const lock = JSON.parse(readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { dev?: boolean; engines?: { node?: string } | string[] }>;
  };
  // The lowest version each branch of our range admits (^20.19.0 → 20.19.0, >=22 → 22.0.0).
  const floors = pkg.engines.node.split('||').map((branch) => lowest(branch.trim()));
  const refused: string[] = [];
  for (const [where, entry] of Object.entries(lock.packages)) {
    const range = !entry.dev && !Array.isArray(entry.engines) ? entry.engines?.node : undefined;
    if (!where || !range) continue;
    for (const floor of floors)
      if (!admits(range, floor))
        refused.push(`${where.replace(/^.*node_modules\//, '')} (${range}) refuses ${floor.join('.')}`);
  }
  assert.deepEqual(refused, [], 'raise engines.node in package.json');
  assert.equal(admits('^20.19.0 || >=22', [21, 0, 0]), false, 'the checker itself tells ranges apart');
});

type Version = [number, number, number];

function parse(text: string): { version: Version; given: number } {
  const parts = text
    .replace(/^v/, '')
    .split('.')
    .filter((part) => part !== 'x' && part !== '*');
  return { version: [Number(parts[0] ?? 0), Number(parts[1] ?? 0), Number(parts[2] ?? 0)], given: parts.length };
}

function compare(a: Version, b: Version): number {
  return a[0] - b[0] || a[1] - b[1] || a[2] - b[2];
}

function lowest(branch: string): Version {
  return parse(branch.replace(/^(\^|~|>=)\s*/, '')).version;
}

/** Whether a node-semver range (the forms dependencies use: >=, >, <, ^, ~, bare, x, ||, spaces) admits a version. */
function admits(range: string, version: Version): boolean {
  return range.split('||').some((branch) => {
    const comparators = branch
      .trim()
      .replace(/(>=|<=|>|<|\^|~)\s+/g, '$1')
      .split(/\s+/)
      .filter(Boolean);
    return comparators.every((comparator) => {
      const [, op = '', rest = ''] = /^(>=|<=|>|<|\^|~|=)?(.*)$/.exec(comparator)!;
      const { version: bound, given } = parse(rest);
      const order = compare(version, bound);
      if (op === '>=') return order >= 0;
      if (op === '>') return order > 0;
      if (op === '<=') return order <= 0;
      if (op === '<') return order < 0;
      if (op === '^') return order >= 0 && version[0] === bound[0];
      if (op === '~') return order >= 0 && version[0] === bound[0] && version[1] === bound[1];
      // A bare version: 20 means 20.x.x, 20.19 means 20.19.x.
      return version.slice(0, given).every((part, i) => part === bound[i]);
    });
  });
}
