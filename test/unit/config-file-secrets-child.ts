// What config-file-secrets.test.ts asks of a config as another user would see it: when the tests run as root
// (who reads any file) it runs this in a child that is root without the capabilities that pass file modes, so a
// locked secret file is refused.
import { ConfigError, parseConfig } from '../../src/config/config.js';

/** The problems parseConfig refuses `raw` with, read from `base` (no environment); none when it loads. */
export function loadProblems(raw: unknown, base: string): string[] {
  try {
    parseConfig(raw, 'test.yaml', base, {});
    return [];
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
}
