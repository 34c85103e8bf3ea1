// The stdio fixtures written in TypeScript (test/fixtures/*.ts), compiled to JavaScript once and run as plain
// `node <file>.js`, without the tests' loader. Why: on Node 20 a process with module hooks sends every module it
// loads (the SDK, zod: about a hundred) through the hooks thread; a fixture that took 0.35 s of CPU to start
// through test/ts-loader.mjs takes 0.22 s as JavaScript, and 0.55 s under tsx, and the suite starts hundreds.
// esbuild (tsx's own, with test/ts-hooks.mjs's options, imported from it) turns them into one folder under
// node_modules/.cache/ts-fixtures named by the hash of every fixture's text, so an edit to any of them makes a
// new folder, and a fixture's `import('./legacy-server.js')` finds its compiled sibling. Packages resolve from
// there as from test/fixtures (the folder is inside the repository's node_modules).
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { esbuildRequire, KEY, OPTIONS } from './ts-hooks.mjs';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const FIXTURES = path.join(ROOT, 'test/fixtures');
const CACHE = path.join(ROOT, 'node_modules/.cache/ts-fixtures');

let compiled: string | undefined;

/** The folder of every TypeScript fixture as JavaScript, compiled now unless an earlier process did. */
function compiledFolder(): string {
  if (compiled !== undefined) return compiled;
  const names = readdirSync(FIXTURES)
    .filter((name) => name.endsWith('.ts') && !name.endsWith('.d.ts'))
    .sort();
  const texts = names.map((name) => readFileSync(path.join(FIXTURES, name), 'utf8'));
  const hash = createHash('sha1').update(KEY);
  for (const [i, name] of names.entries()) hash.update(`\0${name}\0${texts[i]}`);
  const folder = path.join(CACHE, hash.digest('hex'));
  if (!existsSync(folder)) {
    const esbuild = esbuildRequire('esbuild') as typeof import('esbuild');
    const temporary = `${folder}.${process.pid}.tmp`;
    mkdirSync(temporary, { recursive: true });
    writeFileSync(path.join(temporary, 'package.json'), '{ "type": "module" }\n');
    for (const [i, name] of names.entries()) {
      const sourcefile = path.join(FIXTURES, name);
      const { code } = esbuild.transformSync(texts[i]!, { ...OPTIONS, sourcefile });
      writeFileSync(path.join(temporary, name.replace(/\.ts$/, '.js')), code);
    }
    try {
      renameSync(temporary, folder); // whole or not at all: files started together may compile at once
    } catch {
      rmSync(temporary, { recursive: true, force: true }); // another process's folder is there: the same text
    }
  }
  compiled = folder;
  return folder;
}

/** The compiled JavaScript of test/fixtures/<name>.ts, an absolute path for `node <path>`. */
export function compiledFixture(name: string): string {
  const file = path.join(compiledFolder(), `${name}.js`);
  if (!existsSync(file)) throw new Error(`test/fixtures/${name}.ts does not exist (compiledFixture('${name}'))`);
  return file;
}
