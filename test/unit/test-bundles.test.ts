// The test files run as esbuild bundles (test/runner/bundle.mjs): each joined module must still see its own
// import.meta.url, and a place in a bundle must read back as the .ts file and line it came from
// (test/runner/bundled-source.mjs), or a failure would be reported against code nobody wrote.
import assert from 'node:assert/strict';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { bundleOf, bundleTests, writeJoined } from '../runner/bundle.mjs';
import { joinedFiles, sourceFile, sourcePlace } from '../runner/bundled-source.mjs';
import { tempDir } from '../temp.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const OWN_URL = 'test/runner-fixtures/own-url.fixture.ts';
const FAILS = 'test/runner-fixtures/fails.fixture.ts';
// Where the runner writes them, so that a bundle's packages would resolve from node_modules as in a run.
const OUT = path.join(ROOT, `node_modules/.cache/test-bundles/unit-${process.pid}`);
after(() => rmSync(OUT, { recursive: true, force: true }));

test('a bundled module keeps its own import.meta.url, and so does each module joined into it', async () => {
  assert.deepEqual(await bundleTests(OUT, [OWN_URL]), []);
  const bundle = bundleOf(OUT, OWN_URL);
  assert.equal(bundle, path.join(OUT, 'test/runner-fixtures/own-url.fixture.mjs'));
  const joined = await import(pathToFileURL(bundle).href);
  assert.equal(joined.ownUrl, pathToFileURL(path.join(ROOT, OWN_URL)).href);
  assert.equal(joined.rootSeen, ROOT);
  // The code that ran is the bundle's, not the .ts file's: otherwise this test proves nothing.
  assert.match(readFileSync(bundle, 'utf8'), /a place in the bundle/);
});

test('a place in a bundle reads as the .ts line it came from; a file that is no bundle, as itself', async () => {
  assert.deepEqual(await bundleTests(OUT, [FAILS]), []);
  const bundle = bundleOf(OUT, FAILS);
  const lines = readFileSync(bundle, 'utf8').split('\n');
  const at = lines.findIndex((line) => line.includes('the fixture assertion that fails'));
  assert.notEqual(at, -1, 'the bundle holds the test');
  const column = lines[at]!.indexOf('test(') + 1;
  const source = readFileSync(path.join(ROOT, FAILS), 'utf8').split('\n');
  const written = source.findIndex((line) => line.includes('the fixture assertion that fails')) + 1;
  assert.deepEqual(sourcePlace(bundle, at + 1, column), { file: path.join(ROOT, FAILS), line: written });
  assert.equal(sourceFile(bundle), path.join(ROOT, FAILS));
  const plain = path.join(ROOT, 'test/unit/config.test.ts');
  assert.equal(sourceFile(plain), plain);
  assert.deepEqual(sourcePlace(plain, 7, 1), { file: plain, line: 7 });
});

test('a file esbuild cannot read is refused with its name and line, not half bundled', async () => {
  const broken = path.join(tempDir('mcp-gw-bundle-'), 'broken.test.ts');
  writeFileSync(broken, '// not TypeScript on line 3\nexport const fine = 1;\nexport const broken = = 2;\n');
  const errors = await bundleTests(OUT, [broken]);
  assert.equal(errors.length, 1, JSON.stringify(errors));
  assert.match(errors[0]?.location?.file ?? '', /broken\.test\.ts$/);
  assert.equal(errors[0]?.location?.line, 3);
});

test('the entry of files joined in one process imports their bundles and names the .ts files it holds', async () => {
  assert.deepEqual(await bundleTests(OUT, [OWN_URL, FAILS]), []);
  const entry = writeJoined(OUT, 'together-9', [OWN_URL, FAILS]);
  assert.equal(entry, path.join(OUT, 'test/joined/together-9.mjs'));
  // Not imported here (the failing fixture's test would join this file's); test/unit/runner.test.ts runs one.
  const imported = [...readFileSync(entry, 'utf8').matchAll(/^import "([^"]+)";$/gm)].map(([, url]) => url);
  assert.deepEqual(
    imported,
    [OWN_URL, FAILS].map((file) => pathToFileURL(bundleOf(OUT, file)).href),
  );
  assert.deepEqual(joinedFiles(entry), [path.join(ROOT, OWN_URL), path.join(ROOT, FAILS)]);
  assert.equal(joinedFiles(bundleOf(OUT, FAILS)), undefined, 'a single bundle holds no others');
  assert.equal(joinedFiles(path.join(ROOT, FAILS)), undefined);
});
