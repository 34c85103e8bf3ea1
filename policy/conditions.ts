// `when:` conditions, in the Common Expression Language (@marcbachmann/cel-js). Compiled and type-checked
// once per config load, so a typo is a startup error; evaluated per call, where any failure denies.
import type { Environment } from '@marcbachmann/cel-js';
import type { Principal } from './principal.js';

export interface CallFacts {
  args: unknown;
  principal: Principal;
  tool: string;
  server: string;
}

export type Condition = (facts: CallFacts) => { ok: true } | { ok: false; why: string };

// Loaded only when some policy has a condition: most gateways never carry the CEL interpreter in memory.
let environment: Environment | undefined;

/** Loads the CEL interpreter; compileCondition needs it. Config loading calls this when a policy has `when:`. */
export async function loadConditionLanguage(): Promise<void> {
  if (environment) return;
  const { Environment } = await import('@marcbachmann/cel-js');
  environment ??= new Environment({ unlistedVariablesAreDyn: false })
    .registerVariable('args', 'map')
    .registerVariable('principal', 'map')
    .registerVariable('tool', 'string')
    .registerVariable('server', 'string');
}

/** True when the config asks for conditions (a `when:` in any policy), read before it is validated. */
export function usesConditions(rawConfig: unknown): boolean {
  const policies = (rawConfig as { policies?: unknown } | null)?.policies;
  return Array.isArray(policies) && policies.some((p) => p !== null && typeof p === 'object' && 'when' in p);
}

/** Compiles one expression; throws an Error whose message says what is wrong with it. */
export function compileCondition(expr: string): Condition {
  if (!environment) throw new Error('the condition language is not loaded (call loadConditionLanguage() before compiling policies)');
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
