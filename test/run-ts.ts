// The node arguments that run a TypeScript file of this repository in a child process, as the test files
// themselves run: through test/ts-loader.mjs (esbuild's output, cached; see test/ts-hooks.mjs), not tsx.
// An absolute URL, so it holds whatever the child's working directory.
export const RUN_TS: readonly string[] = ['--import', new URL('./ts-loader.mjs', import.meta.url).href];
