// The lint's line-length check (`npm run lint`, after biome): biome's formatter keeps code within 120 columns but
// never breaks a string, a template literal, a regex or a comment, so this fails on any line still longer. It reads
// the files biome checks (biome.jsonc's files.includes, through git so that .gitignore holds as it does for biome).
//   node --import tsx scripts/line-length.ts [root]   root: the checkout (default: the current folder)
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export const MAX_COLUMNS = 120;

/** biome.jsonc without its comments: `//` and `/* *\/` outside strings. */
function withoutComments(jsonc: string): string {
  let out = '';
  for (let i = 0; i < jsonc.length; i++) {
    const ch = jsonc[i]!;
    if (ch === '"') {
      let end = i + 1;
      while (end < jsonc.length && jsonc[end] !== '"') end += jsonc[end] === '\\' ? 2 : 1;
      out += jsonc.slice(i, end + 1);
      i = end;
    } else if (ch === '/' && jsonc[i + 1] === '/') {
      while (i < jsonc.length && jsonc[i] !== '\n') i++;
      out += '\n';
    } else if (ch === '/' && jsonc[i + 1] === '*') {
      i = jsonc.indexOf('*/', i + 2) + 1;
      if (i === 0) break;
    } else out += ch;
  }
  return out;
}

/** The files biome checks under root: its includes as git pathspecs, tracked or new, never ignored. */
export function checkedFiles(root: string): string[] {
  const config = JSON.parse(withoutComments(readFileSync(join(root, 'biome.jsonc'), 'utf8')));
  const includes: string[] = config.files.includes;
  const pathspecs = includes.map((glob) => (glob.startsWith('!') ? `:(exclude)${glob.slice(1)}` : `:(glob)${glob}`));
  const listed = execFileSync(
    'git',
    ['ls-files', '-z', '--cached', '--others', '--exclude-standard', '--', ...pathspecs],
    {
      cwd: root,
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    },
  );
  return [...new Set(listed.split('\0').filter((file) => file !== '' && existsSync(join(root, file))))].sort();
}

/** One message per line over MAX_COLUMNS (counted in code points), in file order. */
export function longLines(root: string, files: string[]): string[] {
  const problems: string[] = [];
  for (const file of files) {
    const lines = readFileSync(join(root, file), 'utf8').split('\n');
    lines.forEach((line, index) => {
      const columns = [...line].length;
      if (columns > MAX_COLUMNS) {
        problems.push(
          `${file}:${index + 1}: ${columns} columns (max ${MAX_COLUMNS}): break the string, comment or regex by hand`,
        );
      }
    });
  }
  return problems;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const root = process.argv[2] ?? process.cwd();
  const problems = longLines(root, checkedFiles(root));
  for (const problem of problems) process.stderr.write(`${problem}\n`);
  process.exitCode = problems.length > 0 ? 1 : 0;
}
