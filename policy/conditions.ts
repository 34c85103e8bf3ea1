// `when:` conditions, in the Common Expression Language (@marcbachmann/cel-js). Compiled and type-checked
// once per config load, so a typo is a startup error; evaluated per call, where any failure denies.
import { Environment } from '@marcbachmann/cel-js';
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
        args: facts.args !== null && typeof facts.args === 'object' && !Array.isArray(facts.args) ? facts.args : {},
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
