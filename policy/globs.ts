// Name and URI globs as policies write them: `*` is any run of characters within one `/`-separated
// segment, `**` as a segment of its own any number of segments (`a/**` also matches `a`, `**/b` also
// matches `b`; elsewhere `**` is `*`), `?` one
// character (a code point) other than `/`, `{x,y}` either alternative (braces without a comma are
// literal, as in `docs://{id}`); everything else is literal.
// Matched by a small NFA, in time linear in the text (times the glob's length): names and URIs come from
// callers, and backtracking regular expressions can be made to take seconds on a long one.

export type Matcher = (text: string) => boolean;

type Token =
  | { kind: 'char'; char: string }
  | { kind: 'one' }
  | { kind: 'star' }
  | { kind: 'globstar' }
  /** Reads nothing: goes on to the next token, or skips `over` tokens (a `/**` or `**\/` that matches nothing). */
  | { kind: 'jump'; over: number };

const NEVER: Matcher = () => false;
const MAX_ALTERNATIVES = 256;

/** One matcher for a list of globs (any may match); an empty list matches nothing. */
export function anyOf(globs: readonly string[] | undefined): Matcher {
  if (!globs || globs.length === 0) return NEVER;
  const exact = new Set<string>();
  const programs: Token[][] = [];
  for (const glob of globs) {
    for (const alternative of expandBraces(glob)) {
      if (/[*?]/.test(alternative)) programs.push(tokenize(alternative));
      else exact.add(alternative);
    }
  }
  if (programs.length === 0) return (text) => exact.has(text);
  return (text) => exact.has(text) || programs.some((program) => run(program, text));
}

/**
 * Whether some text that begins with `head` matches one of the globs: the glob, read as far as `head`
 * goes, has not failed yet (every state left can still reach its end). `github__*` and `git*` may match a
 * name beginning `github__`; `gitlab__*` and `?` may not. Tighter than comparing the glob's literal start
 * with the head (`gh?x*` and `gh__`: no), and errs only towards yes: a later literal no /mcp name can hold
 * (a `.`) still counts.
 */
export function mayMatchBeginning(globs: readonly string[] | undefined, head: string): boolean {
  if (globs === undefined) return true;
  for (const glob of globs) {
    for (const alternative of expandBraces(glob)) {
      if (/[*?]/.test(alternative) ? survives(tokenize(alternative), head) : alternative.startsWith(head)) return true;
    }
  }
  return false;
}

/** A problem with a glob, worded for the config error; undefined when it is fine. */
export function checkGlob(glob: string): string | undefined {
  let depth = 0;
  for (const char of glob) {
    if (char === '{') depth++;
    else if (char === '}' && --depth < 0) return `${JSON.stringify(glob)} has a } without its {`;
  }
  if (depth > 0) return `${JSON.stringify(glob)} has a { without its }`;
  if (expandBraces(glob).length > MAX_ALTERNATIVES)
    return `${JSON.stringify(glob)} expands to more than ${MAX_ALTERNATIVES} alternatives`;
  return undefined;
}

/** `a{b,c{d,e}}` → ab, acd, ace. */
function expandBraces(glob: string): string[] {
  const open = glob.indexOf('{');
  if (open < 0) return [glob];
  let depth = 0;
  const cuts: number[] = [];
  let close = -1;
  for (let i = open; i < glob.length; i++) {
    const char = glob[i];
    if (char === '{') depth++;
    else if (char === '}' && --depth === 0) {
      close = i;
      break;
    } else if (char === ',' && depth === 1) cuts.push(i);
  }
  if (close < 0) return [glob]; // unbalanced: literal (checkGlob reports it at load)
  const head = glob.slice(0, open);
  const tails = expandBraces(glob.slice(close + 1));
  // Without a comma, braces are literal (as in a shell): `docs://{id}` names a URI template.
  if (cuts.length === 0) return tails.map((tail) => glob.slice(0, close + 1) + tail);
  const bounds = [open, ...cuts, close];
  const out: string[] = [];
  for (let i = 0; i + 1 < bounds.length; i++) {
    for (const middle of expandBraces(glob.slice(bounds[i]! + 1, bounds[i + 1]))) {
      for (const tail of tails) {
        out.push(head + middle + tail);
        if (out.length > MAX_ALTERNATIVES) return out;
      }
    }
  }
  return out;
}

function tokenize(glob: string): Token[] {
  const chars = Array.from(glob);
  const tokens: Token[] = [];
  for (let i = 0; i < chars.length; i++) {
    const char = chars[i]!;
    if (char !== '*' || chars[i + 1] !== '*') {
      tokens.push(char === '*' ? { kind: 'star' } : char === '?' ? { kind: 'one' } : { kind: 'char', char });
      continue;
    }
    i++;
    const previous = tokens.at(-1);
    const wholeSegment = (i === 1 || chars[i - 2] === '/') && (i + 1 === chars.length || chars[i + 1] === '/');
    if (!wholeSegment) {
      tokens.push({ kind: 'star' }); // `a**b` is `a*b`: ** crosses segments only as a segment of its own
    } else if (previous?.kind === 'char' && previous.char === '/') {
      // `a/**` matches `a` too, and `a/**/b` matches `a/b`: the `/` and the ** may match nothing together.
      tokens.splice(tokens.length - 1, 0, { kind: 'jump', over: 2 });
      tokens.push({ kind: 'globstar' });
    } else if (tokens.length === 0 && chars[i + 1] === '/') {
      // `**/b` matches `b` too.
      tokens.push({ kind: 'jump', over: 2 }, { kind: 'globstar' }, { kind: 'char', char: '/' });
      i++;
    } else {
      tokens.push({ kind: 'globstar' });
    }
  }
  return tokens;
}

/** Simulates the glob as an NFA over the text's code points: O(text × glob). */
function run(program: readonly Token[], text: string): boolean {
  const states = simulate(program, text);
  return states !== undefined && states[program.length] === 1;
}

/** Whether the glob, having read all of `text`, is still in some state (then some continuation matches). */
function survives(program: readonly Token[], text: string): boolean {
  return simulate(program, text) !== undefined;
}

/** The NFA's states after reading `text`; undefined once none is left. */
function simulate(program: readonly Token[], text: string): Uint8Array | undefined {
  const size = program.length;
  let states = new Uint8Array(size + 1);
  let next = new Uint8Array(size + 1);
  states[0] = 1;
  close(program, states);
  for (const char of text) {
    next.fill(0);
    let alive = false;
    for (let s = 0; s < size; s++) {
      if (!states[s]) continue;
      const token = program[s]!;
      switch (token.kind) {
        case 'char':
          if (token.char === char) next[s + 1] = 1;
          break;
        case 'one':
          if (char !== '/') next[s + 1] = 1;
          break;
        case 'star':
          if (char !== '/') next[s] = 1;
          break;
        case 'globstar':
          next[s] = 1;
          break;
        case 'jump':
          break; // reads nothing
      }
    }
    close(program, next);
    for (let s = 0; s <= size; s++) if (next[s]) alive = true;
    if (!alive) return undefined;
    [states, next] = [next, states];
  }
  return states;
}

/** Adds the states reachable without reading: past a jump, or past a star or globstar matching nothing. */
function close(program: readonly Token[], states: Uint8Array): void {
  // Every move here goes forward, so one pass in order reaches them all.
  for (let s = 0; s < program.length; s++) {
    if (!states[s]) continue;
    const token = program[s]!;
    if (token.kind === 'star' || token.kind === 'globstar') states[s + 1] = 1;
    else if (token.kind === 'jump') {
      states[s + 1] = 1;
      states[s + 1 + token.over] = 1;
    }
  }
}
