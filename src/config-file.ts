// Reading the config file, and the errors a person sees about it: a file that is not there, one that cannot
// be read, YAML that does not parse (shown at its line, with a caret), and the problems of a config that
// parses but is not valid (one line each, every one at once).
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parse as parseYaml, YAMLParseError } from 'yaml';

export class ConfigError extends Error {
  constructor(
    readonly source: string,
    /** Each problem on its own, for the log of a refused reload. */
    readonly problems: string[],
    message = `${source} is not a valid mcp-gateway config:\n${problems.map((p) => `  - ${p.replaceAll('\n', '\n    ')}`).join('\n')}`,
  ) {
    super(message);
    this.name = 'ConfigError';
  }
}

/** The config file is not there; `resolved` is the path as the gateway looked for it. */
export class ConfigFileMissing extends ConfigError {
  constructor(
    source: string,
    readonly resolved: string,
  ) {
    super(source, [`the config file ${resolved} does not exist`], `the config file ${resolved} does not exist`);
  }
}

/** The file's YAML as plain data (undefined for an empty file). */
export async function readConfigFile(file: string): Promise<unknown> {
  const resolved = path.resolve(file);
  let text: string;
  try {
    text = await readFile(resolved, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new ConfigFileMissing(file, resolved);
    const fix = code === 'EISDIR' ? 'pass the file itself, not its folder' : 'give the gateway\'s user read access to it, or pass another file with --config';
    const problem = `the config file ${resolved} cannot be read (${code ?? (error as Error).message}); ${fix}`;
    throw new ConfigError(file, [problem], problem);
  }
  try {
    return parseYaml(text);
  } catch (error) {
    if (!(error instanceof YAMLParseError)) throw error;
    const problem = `not valid YAML: ${yamlProblem(error, text)}`;
    throw new ConfigError(file, [problem], `${file} is ${problem}`);
  }
}

/** The parser's reason, then the line it stopped at (and the one before, which is often the cause) with a caret. */
function yamlProblem(error: YAMLParseError, text: string): string {
  const reason = error.message.split('\n')[0]!;
  const start = error.linePos?.[0];
  if (!start) return reason;
  const lines = text.split(/\r?\n/);
  const width = String(start.line).length;
  const row = (line: number): string => `  ${String(line).padStart(width)} | ${lines[line - 1] ?? ''}`.trimEnd();
  const shown = start.line > 1 ? [row(start.line - 1), row(start.line)] : [row(start.line)];
  return [reason, ...shown, `  ${' '.repeat(width)} | ${' '.repeat(start.col - 1)}^`].join('\n');
}
