// One seed per test file for fast-check, printed at start and with every counterexample, so a property that
// fails in CI can be replayed exactly instead of passing for a flake: FC_SEED=<seed> (and FC_PATH=<path> to
// go straight to the shrunk counterexample) with --test-name-pattern naming the failing test.
import fc from 'fast-check';

const fromEnv = process.env.FC_SEED;
export const FC_SEED =
  fromEnv !== undefined && fromEnv !== '' ? Number(fromEnv) : Math.floor(Math.random() * 0x7fffffff);
if (!Number.isInteger(FC_SEED)) throw new Error(`FC_SEED must be an integer, not ${fromEnv}`);
const FC_PATH = process.env.FC_PATH || undefined;
console.log(`fast-check seed ${FC_SEED}${fromEnv ? ' (from FC_SEED)' : ''}`);

function report<Ts>(details: fc.RunDetails<Ts>): void {
  if (!details.failed) return;
  const replay = `FC_SEED=${details.seed}${details.counterexamplePath ? ` FC_PATH=${details.counterexamplePath}` : ''}`;
  throw new Error(`${fc.defaultReportMessage(details)}\nReplay it: ${replay}`, { cause: details.errorInstance });
}

/** fc.assert with this file's seed (and FC_PATH when set); a failure names the variables that replay it. */
export function assertProperty<Ts>(property: fc.IProperty<Ts>, params?: fc.Parameters<Ts>): void;
export function assertProperty<Ts>(property: fc.IAsyncProperty<Ts>, params?: fc.Parameters<Ts>): Promise<void>;
export function assertProperty<Ts>(
  property: fc.IRawProperty<Ts>,
  params: fc.Parameters<Ts> = {},
): void | Promise<void> {
  const seeded: fc.Parameters<Ts> = { ...params, seed: FC_SEED, ...(FC_PATH ? { path: FC_PATH } : {}) };
  const details = fc.check(property, seeded) as fc.RunDetails<Ts> | Promise<fc.RunDetails<Ts>>;
  if (details instanceof Promise) return details.then((done) => report(done));
  report(details);
}
