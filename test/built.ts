// The dist/ that `npm ci` built (its `prepare` runs `npm run build`), for the tests of the built program and the
// package (packaging, package-install, cli-messages, image-default). They used to compile the TypeScript again
// each, four times a run; now one build serves them all, and a dist/ older than its sources is refused rather than
// tested: `assertBuilt()` throws naming `npm run build`. test/run-files.sh runs this file first (`isBuilt` as a
// program) and builds once when it says dist/ is stale, before any test file starts reading it.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const ROOT = fileURLToPath(new URL('../', import.meta.url));
export const DIST = path.join(ROOT, 'dist');

/** The folders tsconfig.build.json compiles into dist/. */
export function buildInputs(): string[] {
  return (JSON.parse(readFileSync(path.join(ROOT, 'tsconfig.build.json'), 'utf8')) as { include: string[] }).include;
}

/** Why dist/ does not match the sources (a source with no output, or newer than it), or undefined when it does. */
export function staleness(): string | undefined {
  for (const folder of buildInputs()) {
    for (const source of sourcesUnder(folder)) {
      const output = path.join(DIST, source.replace(/\.ts$/, '.js'));
      if (!existsSync(output)) return `dist/ has no ${path.relative(ROOT, output)} for ${source}`;
      if (statSync(output).mtimeMs < statSync(path.join(ROOT, source)).mtimeMs)
        return `${source} is newer than ${path.relative(ROOT, output)}`;
    }
  }
  return undefined;
}

/** Throws, naming the command that fixes it, unless dist/ was built from the sources as they are. */
export function assertBuilt(): void {
  const problem = staleness();
  if (problem !== undefined)
    throw new Error(`dist/ is out of date (${problem}): run \`npm run build\` (npm ci runs it), then this test`);
}

let fresh: boolean | undefined;

/**
 * The node arguments that run the gateway's command line in a child process: the built dist/src/cli.js when
 * dist/ matches the sources (always, in a run of test/run-files.sh, which builds a stale one first), else
 * src/cli.ts through the tests' loader. The same program either way; the built one starts on about half the CPU
 * (Node 20: 0.5 s against 0.95 s, the loader's hooks thread sees every module), and the suite starts dozens.
 */
export function gatewayCli(): string[] {
  fresh ??= staleness() === undefined;
  return fresh
    ? [path.join(DIST, 'src/cli.js')]
    : ['--import', new URL('./ts-loader.mjs', import.meta.url).href, path.join(ROOT, 'src/cli.ts')];
}

/** The TypeScript sources (not declarations) under a folder, relative to the root. */
function sourcesUnder(folder: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(path.join(ROOT, folder), { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.ts') || entry.name.endsWith('.d.ts')) continue;
    found.push(path.relative(ROOT, path.join(entry.parentPath, entry.name)));
  }
  return found;
}

// As a program (test/run-files.sh): exit 1 with the reason when dist/ needs a build.
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const problem = staleness();
  if (problem !== undefined) {
    process.stdout.write(`${problem}\n`);
    process.exit(1);
  }
}
