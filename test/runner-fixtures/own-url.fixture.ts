// Bundled by test/unit/test-bundles.test.ts: a module joined into a bundle keeps its own import.meta.url, and so
// does each module it imports (test/built.ts finds the repository's root from its own).
import { ROOT } from '../built.js';

export const ownUrl = import.meta.url;
export const rootSeen = ROOT;
export const marker = new Error('a place in the bundle').stack;
