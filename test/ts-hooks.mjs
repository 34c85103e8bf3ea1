// Module hooks that run the repository's TypeScript in the tests' processes (test files, fixtures, gateways
// started as children): a `.ts` file loads as esbuild's transform of it, kept in node_modules/.cache/ts-tests
// under the hash of its text, so each file is transformed once per change, not once per process.
//
// Why not tsx: the suite starts hundreds of Node processes, and tsx spent about 0.15 s of CPU loading itself
// in each, and more per module (a gateway under tsx: 1.1 s of CPU to start, 0.7 s under these hooks, 0.45 s as
// plain JS). esbuild is tsx's own transformer, with tsx's options (keepNames, source maps), so the code that
// runs is the same. Node 22 and later take the hooks in-thread (module.registerHooks), which costs nothing
// per module; Node 20 runs them on its hooks thread (module.register), as tsx does.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const CACHE = join(ROOT, 'node_modules/.cache/ts-tests');
// esbuild as tsx brings it (tsx's dependency), so the two transform alike and nothing new is installed.
export const esbuildRequire = createRequire(createRequire(import.meta.url).resolve('tsx'));
const ESBUILD_VERSION = JSON.parse(readFileSync(esbuildRequire.resolve('esbuild/package.json'), 'utf8')).version;
const { compilerOptions } = JSON.parse(readFileSync(join(ROOT, 'tsconfig.json'), 'utf8'));
/** esbuild's transform options, shared with test/compiled-fixtures.ts so a fixture runs as the loader would run it. */
export const OPTIONS = {
  loader: 'ts',
  format: 'esm',
  target: `node${process.versions.node}`,
  sourcemap: 'inline',
  keepNames: true,
  tsconfigRaw: { compilerOptions },
};
/** What a cached output depends on besides the source: the transformer and its options. */
export const KEY = `${ESBUILD_VERSION} ${JSON.stringify(OPTIONS)}`;

/** A file of the repository (not of node_modules) that this hook compiles. */
function isOurTs(url) {
  return url.startsWith('file:') && url.endsWith('.ts') && !url.endsWith('.d.ts') && !url.includes('/node_modules/');
}

/** `./x.js` written in a .ts file names `./x.ts` when only that exists (TypeScript's nodenext convention). */
function tsTwin(specifier, parentURL) {
  if (
    !parentURL?.startsWith('file:') ||
    !specifier.endsWith('.js') ||
    !(specifier.startsWith('./') || specifier.startsWith('../'))
  )
    return undefined;
  const js = new URL(specifier, parentURL);
  if (existsSync(js)) return undefined;
  const ts = new URL(`${specifier.slice(0, -3)}.ts`, parentURL);
  return existsSync(ts) ? ts.href : undefined;
}

function cached(file) {
  const text = readFileSync(file, 'utf8');
  const out = join(
    CACHE,
    `${createHash('sha1').update(KEY).update('\0').update(file).update('\0').update(text).digest('hex')}.js`,
  );
  try {
    return { text, out, code: readFileSync(out, 'utf8') };
  } catch {
    return { text, out, code: undefined };
  }
}

function keep(out, code) {
  try {
    mkdirSync(CACHE, { recursive: true });
    const temporary = `${out}.${process.pid}.tmp`;
    writeFileSync(temporary, code);
    renameSync(temporary, out); // whole or not at all: processes started together may write the same entry
  } catch {
    // A cache that cannot be written only costs the next process a transform.
  }
}

const loaded = (source) => ({ format: 'module', source, shortCircuit: true });

/** In-thread hooks for module.registerHooks (Node 22.15 and later). */
export const syncHooks = {
  resolve(specifier, context, nextResolve) {
    const ts = tsTwin(specifier, context.parentURL);
    return ts ? { url: ts, format: 'module', shortCircuit: true } : nextResolve(specifier, context);
  },
  load(url, context, nextLoad) {
    if (!isOurTs(url)) return nextLoad(url, context);
    const file = fileURLToPath(url);
    const { text, out, code } = cached(file);
    if (code !== undefined) return loaded(code);
    const made = esbuildRequire('esbuild').transformSync(text, { ...OPTIONS, sourcefile: file }).code;
    keep(out, made);
    return loaded(made);
  },
};

// Off-thread hooks for module.register (Node 20).
export async function resolve(specifier, context, nextResolve) {
  const ts = tsTwin(specifier, context.parentURL);
  return ts ? { url: ts, format: 'module', shortCircuit: true } : nextResolve(specifier, context);
}

export async function load(url, context, nextLoad) {
  if (!isOurTs(url)) return nextLoad(url, context);
  const file = fileURLToPath(url);
  const { text, out, code } = cached(file);
  if (code !== undefined) return loaded(code);
  const made = (await esbuildRequire('esbuild').transform(text, { ...OPTIONS, sourcefile: file })).code;
  keep(out, made);
  return loaded(made);
}
