// Types for bundled-source.mjs, which the runner's reporters (plain JavaScript) import.
export declare function sourceFile(file: string): string;
export declare function sourcePlace(
  file: string,
  line: number | undefined,
  column: number | undefined,
): { file: string; line: number | undefined };
export declare function joinedFiles(file: string): string[] | undefined;
