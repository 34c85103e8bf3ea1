// Types of test/ts-hooks.mjs for the TypeScript that imports it (test/compiled-fixtures.ts).
/** `require` from tsx's own folder: esbuild as tsx brings it. */
export declare const esbuildRequire: NodeJS.Require;
/** esbuild's transform options for the repository's TypeScript. */
export declare const OPTIONS: Readonly<Record<string, unknown>>;
/** What a cached output depends on besides the source: the transformer and its options. */
export declare const KEY: string;
export declare const syncHooks: object;
export declare function resolve(specifier: string, context: object, nextResolve: Function): Promise<object>;
export declare function load(url: string, context: object, nextLoad: Function): Promise<object>;
