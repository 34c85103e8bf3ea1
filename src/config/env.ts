// ${VAR} and ${file:path} expansion of a config's string values, before validation. An unset variable or a
// secret file that cannot be read is a problem at the key that names it (its value becomes ''), so the
// caller can report it beside every other problem.
import { readFileSync } from 'node:fs';
import path from 'node:path';

/** A key whose value named an unset variable or an unreadable file: where it is, and what to tell the person. */
export interface EnvProblem {
  path: (string | number)[];
  message: string;
}

const ENV_REF = /\$\$|\$\{file:([^}]+)\}|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/**
 * Replaces ${VAR} and ${VAR:-default} in every string, and ${file:path} with that file's contents (a secret
 * mounted the Docker and Kubernetes way, /run/secrets/<name>; a relative path is read from `baseDir`, the
 * config's folder); `$$` is a literal `$`. Every variable name referenced goes into `reads` (set or not): no
 * stdio child inherits a variable the config reads (src/child-env.ts). A file's contents are never in the
 * gateway's environment, so no child can inherit them: one reaches a child only where the operator wrote
 * ${file:…} into that server's own `env:` or `args`.
 */
export function expandEnv(
  value: unknown,
  at: (string | number)[],
  env: NodeJS.ProcessEnv,
  problems: EnvProblem[],
  reads: Set<string> = new Set(),
  baseDir = process.cwd(),
): unknown {
  if (typeof value === 'string') {
    return value.replace(
      ENV_REF,
      (match, file: string | undefined, name: string | undefined, fallback: string | undefined) => {
        if (match === '$$') return '$';
        if (file !== undefined) return secretFile(file, at, baseDir, problems);
        reads.add(name!);
        const found = env[name!];
        // As in the shell, ${VAR:-default} takes the default when VAR is unset or empty.
        if (found !== undefined && (found !== '' || fallback === undefined)) return found;
        if (fallback !== undefined) return fallback;
        problems.push({
          path: at,
          message: `${keyName(at)}: environment variable ${name} is not set; set it, or write \${${name}:-default}`,
        });
        return '';
      },
    );
  }
  if (Array.isArray(value)) return value.map((item, i) => expandEnv(item, [...at, i], env, problems, reads, baseDir));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value))
      out[key] = expandEnv(item, [...at, key], env, problems, reads, baseDir);
    return out;
  }
  return value;
}

/** A secret file's contents without the line break(s) an editor or `echo` leaves at its end. Cold path: at load. */
function secretFile(written: string, at: (string | number)[], baseDir: string, problems: EnvProblem[]): string {
  const file = path.resolve(baseDir, written);
  try {
    return readFileSync(file, 'utf8').replace(/[\r\n]+$/, '');
  } catch (error) {
    problems.push({
      path: at,
      message:
        `${keyName(at)}: cannot read the secret file ${file} named by \${file:${written}} ` +
        `(${reasonOf(error)}); create it, make it readable by the gateway's user, or fix the path`,
    });
    return '';
  }
}

function reasonOf(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return 'no such file';
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  if (code === 'EISDIR') return 'it is a folder';
  return code ?? String(error);
}

function keyName(at: (string | number)[]): string {
  return at.join('.') || '(top level)';
}
