// Name and URI globs as policies write them: `*` stays within one `/`-separated segment, `**` crosses
// them, `?` is one character, `{a,b}` either. picomatch does the matching; `dot` so names and URIs that
// start with a dot are not special.
import picomatch from 'picomatch';

export type Matcher = (text: string) => boolean;

const NEVER: Matcher = () => false;

/** One matcher for a list of globs (any may match); an empty list matches nothing. */
export function anyOf(globs: readonly string[] | undefined): Matcher {
  if (!globs || globs.length === 0) return NEVER;
  if (globs.includes('**')) return () => true;
  const exact = new Set(globs.filter((g) => !/[*?{}[\]()!+@]/.test(g)));
  const patterns = globs.filter((g) => !exact.has(g)).map((g) => picomatch(g, { dot: true }));
  if (patterns.length === 0) return (text) => exact.has(text);
  return (text) => exact.has(text) || patterns.some((matches) => matches(text));
}

/** Throws with the glob named when picomatch cannot make sense of it. */
export function checkGlob(glob: string): string | undefined {
  try {
    picomatch.makeRe(glob, { dot: true });
    return undefined;
  } catch (error) {
    return `${JSON.stringify(glob)} is not a valid glob (${(error as Error).message})`;
  }
}
