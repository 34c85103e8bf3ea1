// What a config that must not load is refused with, for the tests of the loader's messages.
import assert from 'node:assert/strict';
import path from 'node:path';
import { ConfigError, parseConfig } from '../src/config/config.js';

/** The folder a test's config is read from: relative paths resolve under it. */
export const BASE = path.resolve('/srv/gateway');

/** The ConfigError `load` throws; fails the test when it loads, or throws anything else. */
export function configError(load: () => unknown): ConfigError {
  try {
    load();
  } catch (error) {
    assert.ok(error instanceof ConfigError, `expected a ConfigError, got ${String(error)}`);
    return error;
  }
  assert.fail('expected a ConfigError');
}

/** The problems parseConfig refuses `raw` with (no environment unless given, read from `base`). */
export function configProblems(raw: unknown, env: NodeJS.ProcessEnv = {}, base = BASE): string[] {
  return configError(() => parseConfig(raw, 'test.yaml', base, env)).problems;
}
