// ${VAR} expansion of a config's string values, before validation. An unset variable is a problem at the
// key that names it (its value becomes ''), so the caller can report it beside every other problem.

/** A key whose value named an unset variable: where it is, and what to tell the person. */
export interface EnvProblem {
  path: (string | number)[];
  message: string;
}

const ENV_REF = /\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/**
 * Replaces ${VAR} and ${VAR:-default} in every string; `$$` is a literal `$`. Every name referenced goes into
 * `reads` (set or not): no stdio child inherits a variable the config reads (src/child-env.ts).
 */
export function expandEnv(value: unknown, at: (string | number)[], env: NodeJS.ProcessEnv, problems: EnvProblem[], reads: Set<string> = new Set()): unknown {
  if (typeof value === 'string') {
    return value.replace(ENV_REF, (match, name: string | undefined, fallback: string | undefined) => {
      if (match === '$$') return '$';
      reads.add(name!);
      const found = env[name!];
      // As in the shell, ${VAR:-default} takes the default when VAR is unset or empty.
      if (found !== undefined && (found !== '' || fallback === undefined)) return found;
      if (fallback !== undefined) return fallback;
      problems.push({ path: at, message: `${at.join('.') || '(top level)'}: environment variable ${name} is not set; set it, or write \${${name}:-default}` });
      return '';
    });
  }
  if (Array.isArray(value)) return value.map((item, i) => expandEnv(item, [...at, i], env, problems, reads));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) out[key] = expandEnv(item, [...at, key], env, problems, reads);
    return out;
  }
  return value;
}
