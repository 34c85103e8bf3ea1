// `when:` conditions, in the Common Expression Language (@marcbachmann/cel-js). Compiled and type-checked
// once per config load, so a typo is a startup error; evaluated per call, where any failure denies.
import { Environment } from '@marcbachmann/cel-js';
import { isRawNumber } from '../protocol/exact-json.js';
import type { Principal } from './principal.js';

export interface CallFacts {
  args: unknown;
  principal: Principal;
  tool: string;
  server: string;
}

export type Condition = (facts: CallFacts) => { ok: true } | { ok: false; why: string };

const environment = new Environment({ unlistedVariablesAreDyn: false })
  .registerVariable('args', 'map')
  .registerVariable('principal', 'map')
  .registerVariable('tool', 'string')
  .registerVariable('server', 'string');

/** Compiles one expression; throws an Error whose message says what is wrong with it. */
export function compileCondition(expr: string): Condition {
  const program = environment.parse(expr);
  const checked = program.check();
  if (!checked.valid) throw new Error((checked.error?.message ?? 'it does not type-check').split('\n')[0]);
  if (checked.type !== 'bool' && checked.type !== 'dyn') throw new Error(`it gives a ${checked.type}, not a bool`);
  return (facts) => {
    try {
      const value = program({
        args: facts.args !== null && typeof facts.args === 'object' && !Array.isArray(facts.args) ? asDoubles(facts.args) : {},
        principal: { id: facts.principal.id, groups: facts.principal.groups, via: facts.principal.via },
        tool: facts.tool,
        server: facts.server,
      });
      return value === true ? { ok: true } : { ok: false, why: value === false ? 'it is false' : `it gave ${String(value)}, not true` };
    } catch (error) {
      return { ok: false, why: `it failed: ${(error as Error).message.split('\n')[0]}` };
    }
  };
}

/**
 * The arguments as CEL reads them: a number kept as written (protocol/exact-json.ts, a 64-bit id) is an
 * object to JavaScript, which CEL would take for a map and fail every comparison on; it reads as the double
 * it always read as. A copy, and only where there is one: what the server is sent keeps its digits.
 */
function asDoubles(value: unknown): unknown {
  if (isRawNumber(value)) return Number(value.rawJSON);
  if (value === null || typeof value !== 'object') return value;
  let copy: Record<string, unknown> | unknown[] | undefined;
  for (const [key, inner] of Object.entries(value)) {
    const read = asDoubles(inner);
    if (read === inner) continue;
    copy ??= Array.isArray(value) ? [...value] : { ...(value as Record<string, unknown>) };
    (copy as Record<string, unknown>)[key] = read;
  }
  return copy ?? value;
}
