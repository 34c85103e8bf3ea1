// Checks across keys (prefix clashes, auth, policies) need a config that validates. So that a person sees
// every problem in one pass, the parts the schema refused are cut out of a copy (or stood in for) until
// the rest validates; the caller then runs only the checks that read nothing cut, and so never reports a
// problem the file does not have (a cut auth key must not turn into "nobody could call").
import type { z } from 'zod';

type Path = PropertyKey[];

export interface Salvaged<T> {
  config: T;
  /** Dotted paths of what was cut or stood in for, for example `servers.c` or `listen.port`. */
  cut: string[];
}

export interface SalvageRules {
  /** Where a problem at `path` is cut: the item it belongs to (a whole server), or the key itself. */
  unit(path: Path): Path;
  /** A valid stand-in for a cut list item whose index others name (policies[i]); undefined to drop it. */
  standIn(path: Path): unknown;
}

const ROUNDS = 8;

/** The valid rest of `value`, or undefined when nothing checkable is left (the top level itself is wrong). */
export function salvage<T>(
  schema: z.ZodType<T>,
  value: unknown,
  issues: readonly z.core.$ZodIssue[],
  rules: SalvageRules,
): Salvaged<T> | undefined {
  let copy = structuredClone(value);
  const cut: Path[] = [];
  let pending = issues;
  for (let round = 0; round < ROUNDS; round++) {
    for (const issue of pending) {
      const paths =
        issue.code === 'unrecognized_keys'
          ? issue.keys.map((key) => [...issue.path, key])
          : [rules.unit([...issue.path])];
      for (const path of paths) {
        const target = existing(copy, path);
        if (target.length === 0) return undefined;
        remove(copy, target, rules.standIn(target));
        cut.push(target);
      }
    }
    copy = compact(copy);
    const parsed = schema.safeParse(copy);
    if (parsed.success) return { config: parsed.data, cut: cut.map((path) => path.join('.')) };
    pending = parsed.error.issues;
  }
  return undefined;
}

/** The path, or its nearest ancestor that exists: a required key that is missing is cut with its parent. */
function existing(root: unknown, path: Path): Path {
  let at = path;
  while (at.length > 0 && get(root, at) === undefined) at = at.slice(0, -1);
  return at;
}

function get(root: unknown, path: Path): unknown {
  let node = root;
  for (const key of path) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<PropertyKey, unknown>)[key];
  }
  return node;
}

const DROPPED = Symbol('dropped');

function remove(root: unknown, path: Path, standIn: unknown): void {
  const parent = get(root, path.slice(0, -1)) as Record<PropertyKey, unknown>;
  const key = path[path.length - 1]!;
  if (standIn !== undefined) parent[key] = standIn;
  // List items are marked, not spliced, so the indexes of later problems in the same round stay true;
  // the marks are removed before the copy is validated again.
  else if (Array.isArray(parent)) parent[key as number] = DROPPED;
  else delete parent[key];
}

function compact(value: unknown): unknown {
  if (Array.isArray(value)) return value.filter((item) => item !== DROPPED).map(compact);
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, compact(item)]));
  return value;
}
