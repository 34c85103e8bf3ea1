// `when:` conditions, in the Common Expression Language (@marcbachmann/cel-js). Compiled and type-checked
// once per config load, so a typo is a startup error; evaluated per call, where any failure denies.
import { createRequire } from 'node:module';
import type { Environment } from '@marcbachmann/cel-js';
import { isRawNumber } from '../protocol/exact-json.js';
import type { Principal } from './principal.js';

export interface CallFacts {
  args: unknown;
  principal: Principal;
  tool: string;
  server: string;
}

export type Condition = (facts: CallFacts) => { ok: true } | { ok: false; why: string };

let environment: Environment | undefined;

/**
 * The CEL environment, made at the first condition compiled: a config without `when:` never loads the CEL
 * package (about 1 MB of heap an idle gateway held for nothing; docs/design.md). Compiling is synchronous
 * (the config's checks call it), so the package, an ES module, is loaded with require(), which Node 20.19
 * and 22.12 and later allow (package.json's engines).
 */
function celEnvironment(): Environment {
  if (environment !== undefined) return environment;
  const cel = createRequire(import.meta.url)('@marcbachmann/cel-js') as typeof import('@marcbachmann/cel-js');
  environment = new cel.Environment({ unlistedVariablesAreDyn: false })
    .registerVariable('args', 'map')
    .registerVariable('principal', 'map')
    .registerVariable('tool', 'string')
    .registerVariable('server', 'string');
  return environment;
}

/** Compiles one expression; throws an Error whose message says what is wrong with it. */
export function compileCondition(expr: string): Condition {
  const program = celEnvironment().parse(expr);
  const checked = program.check();
  if (!checked.valid) throw new Error((checked.error?.message ?? 'it does not type-check').split('\n')[0]);
  if (checked.type !== 'bool' && checked.type !== 'dyn') throw new Error(`it gives a ${checked.type}, not a bool`);
  return (facts) => {
    try {
      const value = program({
        args:
          facts.args !== null && typeof facts.args === 'object' && !Array.isArray(facts.args)
            ? asCel(facts.args, 'args')
            : {},
        principal: { id: facts.principal.id, groups: facts.principal.groups, via: facts.principal.via },
        tool: facts.tool,
        server: facts.server,
      });
      return value === true
        ? { ok: true }
        : { ok: false, why: value === false ? 'it is false' : `it gave ${String(value)}, not true` };
    } catch (error) {
      return { ok: false, why: `it failed: ${(error as Error).message.split('\n')[0]}` };
    }
  };
}

/**
 * The arguments as CEL reads them, never a rounded number. A number kept as written (protocol/exact-json.ts:
 * one no double holds exactly, which the server receives digit for digit, Node 22 and later) is an object
 * to JavaScript, which CEL would take for a map. An integer reads as a CEL int (a BigInt: compared exactly,
 * so ids near 1.2e18 do not compare equal within ±128); any other such number (100.000000000000001, 1e400)
 * refuses the call when the condition reads it, rather than deciding on the double it rounds to. A copy,
 * and only where there is one: what the server is sent keeps its digits. (On Node 20 the parse rounds, and
 * the server is sent the rounded number too: the condition decides on what the server gets.)
 */
function asCel(value: unknown, path: string): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (isRawNumber(value)) return /^-?\d+$/.test(value.rawJSON) ? BigInt(value.rawJSON) : value;
  let copy: Record<string, unknown> | unknown[] | undefined;
  for (const [key, inner] of Object.entries(value)) {
    const where = Array.isArray(value) ? `${path}[${key}]` : `${path}.${key}`;
    const read = asCel(inner, where);
    if (read === inner && !isRawNumber(inner)) continue;
    copy ??= Array.isArray(value) ? [...value] : { ...(value as Record<string, unknown>) };
    if (isRawNumber(read))
      Object.defineProperty(copy, key, { enumerable: true, get: () => refuseInexact(where, read.rawJSON) });
    else (copy as Record<string, unknown>)[key] = read;
  }
  return copy ?? value;
}

function refuseInexact(where: string, raw: string): never {
  const shown = raw.length > 40 ? `${raw.slice(0, 40)}…` : raw;
  throw new Error(
    `${where} is ${shown}, a number no double holds exactly: a condition compares integers exactly but refuses such ` +
      `a number rather than round it`,
  );
}
