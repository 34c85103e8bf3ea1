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
    message = `${source} is not a valid mcp-gateway ` +
      `config:\n${problems.map((p) => `  - ${p.replaceAll('\n', '\n    ')}`).join('\n')}`,
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
    const fix =
      code === 'EISDIR'
        ? 'pass the file itself, not its folder'
        : "give the gateway's user read access to it, or pass another file with --config";
    const problem = `the config file ${resolved} cannot be read (${code ?? (error as Error).message}); ${fix}`;
    throw new ConfigError(file, [problem], problem);
  }
  try {
    return parseYaml(text);
  } catch (error) {
    let problem: string;
    if (error instanceof YAMLParseError)
      problem = shown(error.message.split('\n')[0]!, text, error.linePos?.[0], HINTS[error.code]);
    else if (error instanceof ReferenceError && error.message.startsWith('Unresolved alias'))
      problem = unresolvedAlias(error.message, text);
    else throw error;
    throw new ConfigError(file, [`not valid YAML: ${problem}`], `${file} is not valid YAML: ${problem}`);
  }
}

/** What to do about the parser's most common complaints (its own words say what, not how to fix it). */
const HINTS: Partial<Record<YAMLParseError['code'], string>> = {
  BLOCK_AS_IMPLICIT_KEY: 'Quote a value that holds ": ", for example  key: "a: b"',
  TAB_AS_INDENT: 'Indent with spaces, not tabs',
  BAD_INDENT:
    'Start the keys of one map in the same column, and close every { and [ on the line that opened it or indent ' +
    'what follows',
  MISSING_CHAR: 'Close the quote or bracket opened before this point',
  DUPLICATE_KEY: 'Remove or rename one of the two keys',
  BAD_SCALAR_START: 'Quote the value',
  BAD_ALIAS: 'Quote a value that begins with *, for example  "*"',
  BAD_DQ_ESCAPE: 'In double quotes a \\ begins an escape: write \\\\, or use single quotes',
  MULTIPLE_DOCS: 'The config is one YAML document: remove the second ---',
};

/** An unquoted value that begins with `*` is an alias in YAML; one naming no anchor fails without a position. */
function unresolvedAlias(message: string, text: string): string {
  const name = message.slice(message.lastIndexOf(' ') + 1);
  const lines = text.split(/\r?\n/);
  const line = lines.findIndex((content) => content.includes(`*${name}`));
  const at = line < 0 ? undefined : { line: line + 1, col: lines[line]!.indexOf(`*${name}`) + 1 };
  const where = at ? ` at line ${at.line}, column ${at.col}:` : '';
  return shown(
    `a value that begins with * is an alias in YAML, and no anchor is named ${name}${where}`,
    text,
    at,
    'Quote the value, for example  "*.example.com"',
  );
}

/** The reason, then the line (and the one before, which is often the cause) with a caret, then what to do. */
function shown(
  reason: string,
  text: string,
  at: { line: number; col: number } | undefined,
  hint: string | undefined,
): string {
  const rows = [reason];
  if (at) {
    const lines = text.split(/\r?\n/);
    const width = String(at.line).length;
    const row = (line: number): string => `  ${String(line).padStart(width)} | ${lines[line - 1] ?? ''}`.trimEnd();
    if (at.line > 1) rows.push(row(at.line - 1));
    rows.push(row(at.line), `  ${' '.repeat(width)} | ${' '.repeat(at.col - 1)}^`);
  }
  if (hint) rows.push(`  ${hint}`);
  return rows.join('\n');
}
