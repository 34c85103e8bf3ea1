// The test files as esbuild bundles, so that a test file's process loads plain JavaScript and no module hooks:
// each file's bundle is <out dir>/<file without .ts>.mjs, the chunks they share are in <out dir>/chunks/, and a
// group of files that share a process has an entry of its own (writeJoined). The command is at the end.
//
// Why: on Node 20 the TypeScript loader's hooks (test/ts-loader.mjs) run on a thread of their own, and every module
// a process loads, the packages' too, crosses to it and back; a file of ours is one module among hundreds. A test
// file importing the harness spent about 1.7 s of CPU before its first test; as a bundle it loads the same code as
// a few chunks, with no hooks: 0.5–1.3 s less CPU per end-to-end file, 0.5 s per unit file, about a sixth of a
// run. Packages stay outside the bundles (each is imported as it would be), so only our own files are joined.
//
// A module joined into a bundle keeps its own import.meta.url (the .ts file it came from): the tests find their
// fixtures, and the gateway its package.json, relative to where the code was written, as they do unbundled.
// Linked source maps point stack traces and the failure summary (test/failure-summary.mjs) back at the .ts lines.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { esbuildRequire } from '../ts-hooks.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** The name each joined module's own URL goes by; esbuild renames it apart where modules share a chunk. */
const OWN_URL = '__ownModuleUrl';

/** Where the bundle of `file` (relative to the root) is written under `outDir`. */
export function bundleOf(outDir, file) {
  return path.join(outDir, file.replace(/\.[mc]?[jt]s$/, '.mjs'));
}

/** A plugin that gives each file of ours its own import.meta.url, declared on its first line (no line moves). */
const ownUrl = {
  name: 'own-import-meta-url',
  setup(build) {
    build.onLoad({ filter: /\.[mc]?[jt]s$/ }, (args) => {
      if (args.path.includes(`${path.sep}node_modules${path.sep}`)) return undefined;
      const text = readFileSync(args.path, 'utf8');
      if (!text.includes('import.meta')) return undefined;
      const declared = `const ${OWN_URL} = ${JSON.stringify(pathToFileURL(args.path).href)};`;
      return { contents: declared + text, loader: /\.[mc]?ts$/.test(args.path) ? 'ts' : 'js' };
    });
  },
};

/** Bundles `files` (paths relative to the root) into `outDir`; resolves to esbuild's errors, empty when none. */
export async function bundleTests(outDir, files) {
  try {
    await esbuildRequire('esbuild').build({
      absWorkingDir: ROOT,
      entryPoints: files,
      outdir: outDir,
      outbase: ROOT,
      outExtension: { '.js': '.mjs' },
      bundle: true,
      // One copy of what several files share (the gateway, the harness), loaded as a few chunks.
      splitting: true,
      chunkNames: 'chunks/[hash]',
      packages: 'external',
      format: 'esm',
      platform: 'node',
      target: 'node20',
      // As test/ts-hooks.mjs transforms (tsx's options): a function keeps its name.
      keepNames: true,
      sourcemap: 'linked',
      sourcesContent: false,
      define: { 'import.meta.url': OWN_URL },
      plugins: [ownUrl],
      logLevel: 'silent',
    });
    return [];
  } catch (error) {
    return error.errors?.length ? error.errors : [error];
  }
}

/**
 * The entry of a JOINED group (test/runner/plan.mjs): a module that imports the members' bundles in their order,
 * so that one process runs all their tests. Written as <out dir>/test/joined/<name>.mjs; its imports are also
 * how the failure summary learns which files it holds (test/runner/bundled-source.mjs, joinedFiles).
 */
export function writeJoined(outDir, name, files) {
  const entry = path.join(outDir, 'test', 'joined', `${name}.mjs`);
  mkdirSync(path.dirname(entry), { recursive: true });
  const imports = files.map((file) => `import ${JSON.stringify(pathToFileURL(bundleOf(outDir, file)).href)};\n`);
  writeFileSync(entry, `// The test files of one process (test/runner/bundle.mjs, writeJoined).\n${imports.join('')}`);
  return entry;
}

/**
 * The command: `node test/runner/bundle.mjs <out dir> [<extra file>…] < listing` bundles the files of the listing
 * test/runner/plan.mjs printed (`<pass> <file>…`, a line per process) and the extra files, and prints the listing
 * again with each line's files replaced by the one module its process runs: a file's bundle, or the entry of a
 * line of several files (writeJoined), after a `#` line naming them. On errors it prints them and exits 1.
 */
async function main([dir, ...extra]) {
  const outDir = path.resolve(dir);
  const lines = readFileSync(0, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => line.split(' '));
  const errors = await bundleTests(outDir, [...new Set(lines.flatMap(([, ...files]) => files)), ...extra]);
  for (const error of errors) {
    const where = error.location ? `${error.location.file}:${error.location.line}: ` : '';
    process.stderr.write(`${where}${error.text ?? error.message ?? error}\n`);
  }
  if (errors.length) process.exit(1);
  const count = new Map();
  const out = lines.map(([pass, ...files]) => {
    if (files.length === 1) return `${pass} ${bundleOf(outDir, files[0])}\n`;
    count.set(pass, (count.get(pass) ?? 0) + 1);
    const entry = writeJoined(outDir, `${pass}-${count.get(pass)}`, files);
    return `# ${path.relative(outDir, entry)} runs in one process: ${files.join(' ')}\n${pass} ${entry}\n`;
  });
  process.stdout.write(out.join(''));
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main(process.argv.slice(2));
