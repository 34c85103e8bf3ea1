// `node --import ./test/module-recorder.mjs …` with MODULES_OUT=<file>: every module the process loads, one URL
// a line, appended to that file: what ES modules resolved to (import and import(), through the module hooks)
// and, at exit, every CommonJS file in require's cache (what a CommonJS package loaded with require(), which
// Node 20's hooks do not see). For test/e2e/lazy-modules.test.ts: which modules a config makes the gateway load.
import module, { createRequire } from 'node:module';
import { appendFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

const out = process.env.MODULES_OUT;
if (!out) throw new Error('module-recorder.mjs needs MODULES_OUT, the file to write the loaded modules to');
const seen = new Set();
if (typeof module.registerHooks === 'function') {
  // Node 22 and later: in this thread, as test/ts-loader.mjs registers its own.
  module.registerHooks({
    resolve(specifier, context, next) {
      const resolved = next(specifier, context);
      seen.add(resolved.url);
      return resolved;
    },
  });
} else {
  // Node 20: on the hooks thread, which writes each URL as it resolves.
  module.register('./module-recorder-hooks.mjs', import.meta.url, { data: { out } });
}
process.on('exit', () => {
  const required = Object.keys(createRequire(import.meta.url).cache).map((file) => pathToFileURL(file).href);
  appendFileSync(out, [...seen, ...required].map((url) => `${url}\n`).join(''));
});
