// Types for bundle.mjs, which stays plain JavaScript so test/run-files.sh runs it with a bare `node`.
/** One of esbuild's messages (its location when it has one). */
export interface BundleError {
  text?: string;
  message?: string;
  location?: { file: string; line: number; column: number } | null;
}
export declare function bundleOf(outDir: string, file: string): string;
export declare function bundleTests(outDir: string, files: string[]): Promise<BundleError[]>;
export declare function writeJoined(outDir: string, name: string, files: string[]): string;
