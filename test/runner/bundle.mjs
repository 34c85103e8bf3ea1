// The test files as esbuild bundles, so that a test file's process loads plain JavaScript and no module hooks:
// `node test/runner/bundle.mjs <out dir> <file>…` writes <out dir>/<file without .ts>.mjs for each file (and the
// chunks they share in <out dir>/chunks/), or prints esbuild's errors and exits 1.
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
import { readFileSync } from 'node:fs';
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

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const [outDir, ...files] = process.argv.slice(2);
  const errors = await bundleTests(path.resolve(outDir), files);
  for (const error of errors) {
    const where = error.location ? `${error.location.file}:${error.location.line}: ` : '';
    process.stderr.write(`${where}${error.text ?? error.message ?? error}\n`);
  }
  process.exit(errors.length ? 1 : 0);
}
