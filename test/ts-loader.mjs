// `node --import ./test/ts-loader.mjs file.ts`: how the tests run TypeScript (test/run-files.sh, the fixtures
// and child gateways the harness starts). See test/ts-hooks.mjs for what it does and why not tsx.
import module from 'node:module';

if (typeof module.registerHooks === 'function') {
  const { syncHooks } = await import('./ts-hooks.mjs');
  module.registerHooks(syncHooks);
} else {
  module.register('./ts-hooks.mjs', import.meta.url);
}
// Stack traces name the .ts file and line, as under tsx.
process.setSourceMapsEnabled(true);
