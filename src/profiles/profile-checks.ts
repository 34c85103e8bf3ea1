// What a profile's settings must satisfy at load, each problem worded with its fix: globs that parse, and
// renames that give every tool one public name hosts accept — no two onto the same name, none onto a name
// the profile already shows, none too long or with characters hosts refuse. A `describe` for a name the
// profile does not show (yet) is fine: a server may list it later.
import { anyOf, checkGlob } from '../../policy/globs.js';
import { PUBLIC_NAME } from '../../protocol/public-names.js';
import type { ProfileSetting } from './profile.js';

/** Every problem of every profile; `heads` are how each server's names begin on /mcp (`<prefix><separator>`). */
export function profileProblems(
  profiles: Readonly<Record<string, ProfileSetting>>,
  heads: readonly string[],
): string[] {
  const problems: string[] = [];
  for (const [name, profile] of Object.entries(profiles))
    problems.push(...problemsOf(`profiles.${name}`, profile, heads));
  return problems;
}

function problemsOf(at: string, profile: ProfileSetting, heads: readonly string[]): string[] {
  const problems: string[] = [];
  for (const key of ['tools', 'prompts', 'resources'] as const) {
    for (const glob of profile[key] ?? []) {
      const problem = checkGlob(glob);
      if (problem) problems.push(`${at}.${key}: ${problem}; correct the glob (globs are written as in policies)`);
    }
  }
  const rename = Object.entries(profile.rename ?? {});
  const sources = new Set(rename.map(([source]) => source));
  const firstSource = new Map<string, string>();
  // The globs that would show `name` as itself: only a name some server's names begin like can be on /mcp.
  const showing = (name: string): string[] =>
    sources.has(name) || !heads.some((head) => name.startsWith(head))
      ? []
      : (['tools', 'prompts'] as const)
          .filter((kind) => matches(profile[kind], name))
          .map((kind) => (profile[kind] === undefined ? `${at}.${kind} (left out: every one)` : `${at}.${kind}`));
  for (const [source, shown] of rename) {
    const where = `${at}.rename.${source}`;
    const invalid = nameProblem(shown);
    if (invalid) {
      problems.push(`${where}: ${invalid}`);
      continue;
    }
    const other = firstSource.get(shown);
    if (other !== undefined) {
      problems.push(`${where}: ${other} is renamed to ${shown} already; give each its own public name`);
      continue;
    }
    firstSource.set(shown, source);
    if (!matches(profile.tools, source) && !matches(profile.prompts, source)) {
      problems.push(
        `${where}: neither ${at}.tools nor ${at}.prompts matches ${source}, so the rename would show nothing; add ` +
          `${source} (or a glob matching it) to the one it is`,
      );
      continue;
    }
    if (profile.search && (shown === 'search_tools' || shown === 'call_tool')) {
      problems.push(`${where}: ${shown} is one of search mode's own tools on this profile; choose another public name`);
      continue;
    }
    const globs = shown === source ? [] : showing(shown);
    if (globs.length > 0) {
      problems.push(
        `${where}: ${shown} is a name this profile already shows (${globs.join(' and ')} match it); choose a public ` +
          `name those globs do not match, or narrow them`,
      );
    }
  }
  return problems;
}

/** Why a public name would not do, or undefined. */
function nameProblem(name: string): string | undefined {
  if (PUBLIC_NAME.test(name)) return undefined;
  if (name.length === 0) return 'the public name is empty; give 1-64 characters of A-Z a-z 0-9 _ -';
  const length = [...name].length;
  if (length > 64)
    return `the public name ${JSON.stringify(name)} is ${length} characters; hosts accept at most 64, so shorten it`;
  return `the public name ${JSON.stringify(name)} has characters hosts refuse in a tool name; use only A-Z a-z 0-9 _ -`;
}

function matches(globs: readonly string[] | undefined, name: string): boolean {
  return globs === undefined || anyOf(globs)(name);
}
