// Types for plan.mjs, which stays plain JavaScript so test/run-files.sh runs it with a bare `node`.
export declare const ALONE: string[];
export declare const LONGEST: string[];
export declare const SMOKE: string[];
export declare function allTestFiles(root: string): string[];
export declare function secondLeg(root: string, suite: string[]): string[];
export declare const JOINED_FILES: number;
export declare function joined(root: string, files: string[]): string[][];
export declare function processes(files: string[], groups: string[][]): string[][];
export declare function plan(
  root: string,
  env: Record<string, string | undefined>,
): { together: string[]; browsers: string[]; alone: string[]; joined: string[][]; problems: string[] };
