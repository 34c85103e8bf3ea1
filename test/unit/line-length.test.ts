import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');
const LONG = `const s = '${'x'.repeat(108)}';`; // 121 columns

/** A scratch checkout with biome.jsonc's includes, and the files given, then the script's run on it. */
function runOn(files: Record<string, string>): { status: number | null; stderr: string } {
  const dir = mkdtempSync(join(tmpdir(), 'line-length-'));
  try {
    spawnSync('git', ['init', '-q', dir]);
    const biome = [
      '{',
      "  // as the repo's: a comment, then globs",
      '  "files": { "includes": ["src/**/*.ts", "!src/generated"] }',
      '}',
      '',
    ].join('\n');
    writeFileSync(join(dir, 'biome.jsonc'), biome);
    for (const [name, text] of Object.entries(files)) {
      mkdirSync(dirname(join(dir, name)), { recursive: true });
      writeFileSync(join(dir, name), text);
    }
    const run = spawnSync(
      process.execPath,
      ['--import', join(ROOT, 'test/ts-loader.mjs'), 'scripts/line-length.ts', dir],
      {
        cwd: ROOT,
        encoding: 'utf8',
      },
    );
    return { status: run.status, stderr: run.stderr };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('a line over 120 columns in a file biome checks fails the check, naming file, line and columns', () => {
  const run = runOn({ 'src/a.ts': `const ok = 1;\n${LONG}\n` });
  assert.equal(run.status, 1, run.stderr);
  assert.equal(run.stderr, 'src/a.ts:2: 121 columns (max 120): break the string, comment or regex by hand\n');
});

test('120 columns pass, and so do long lines in files biome skips (excluded, ignored, or not included)', () => {
  const run = runOn({
    'src/a.ts': `${'/'.repeat(120)}\n`,
    'src/generated/b.ts': `${LONG}\n`,
    'src/ignored.ts': `${LONG}\n`,
    '.gitignore': 'src/ignored.ts\n',
    'README.md': `${LONG}\n`,
  });
  assert.equal(run.stderr, '');
  assert.equal(run.status, 0);
});
