// The test file, and line, a bundle's report stands for: test/run-files.sh runs each test file as an esbuild bundle
// (test/runner/bundle.mjs) under node_modules/.cache/test-bundles/, so node:test names the bundle and a line in
// it. What the run prints names the .ts file and its line, read from the bundle's source map.
import { existsSync, readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const BUNDLES = `${path.sep}node_modules${path.sep}.cache${path.sep}test-bundles${path.sep}`;
const RUN_FOLDER = /^[^/\\]+[/\\]/;

/** `file` itself when it is no bundle; otherwise the test file it was made from (absolute). */
export function sourceFile(file) {
  const at = typeof file === 'string' ? file.indexOf(BUNDLES) : -1;
  if (at === -1) return file;
  const root = file.slice(0, at + 1);
  const relative = file.slice(at + BUNDLES.length).replace(RUN_FOLDER, '');
  const stem = relative.replace(/\.mjs$/, '');
  const source = ['.ts', '.mts', '.mjs', '.js'].map((ext) => path.join(root, stem + ext)).find(existsSync);
  return source ?? path.join(root, relative);
}

/** The source file and line of a place in a bundle (line and column 1-based, as node:test reports them). */
export function sourcePlace(file, line, column) {
  const source = sourceFile(file);
  if (file === source) return { file, line };
  const fallback = { file: source, line: undefined };
  if (line === undefined) return fallback;
  try {
    const map = new SourceMap(JSON.parse(readFileSync(`${file}.map`, 'utf8')));
    const entry = map.findEntry(line - 1, Math.max(0, (column ?? 1) - 1));
    if (!entry?.originalSource) return fallback;
    const original = entry.originalSource.startsWith('file:')
      ? new URL(entry.originalSource).pathname
      : path.resolve(path.dirname(file), entry.originalSource);
    return { file: original, line: entry.originalLine + 1 };
  } catch {
    return fallback; // a missing or unreadable map costs the line, not the report
  }
}

/** The test files a joined group's entry runs in its one process (bundle.mjs, writeJoined), or undefined. */
export function joinedFiles(file) {
  if (typeof file !== 'string' || !file.includes(BUNDLES) || !file.includes(`${path.sep}joined${path.sep}`)) return;
  try {
    const imports = readFileSync(file, 'utf8').matchAll(/^import "(file:[^"]+)";$/gm);
    return [...imports].map(([, url]) => sourceFile(fileURLToPath(url)));
  } catch {
    return undefined; // the run's folder is gone: the entry is named alone
  }
}
