// A Log that keeps every line it is given, for tests that assert on what the code logged (or print it when
// an assertion fails).
import type { Log } from '../infra/log.js';

export type Level = 'debug' | 'info' | 'warn' | 'error';

export interface LoggedLine {
  level: Level;
  /** The object logged, with the bindings of the child log it was logged through (a child's `server`, …). */
  obj: Record<string, unknown>;
  /** The message, '' when none was given. */
  msg: string;
}

export interface RecordingLog {
  log: Log;
  lines: LoggedLine[];
  /** The messages logged at warn. */
  warnings(): string[];
  /** The messages logged at any of `levels`. */
  messages(...levels: Level[]): string[];
}

/** `log` (and every child of it) records into `lines`. */
export function recordingLog(): RecordingLog {
  const lines: LoggedLine[] = [];
  const under = (bindings: Record<string, unknown>): Log => {
    const bound = Object.keys(bindings).length > 0;
    const at = (level: Level) => (obj: object, msg?: string) => void lines.push({ level, obj: bound ? { ...bindings, ...obj } : (obj as Record<string, unknown>), msg: msg ?? '' });
    return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error'), child: (more) => under({ ...bindings, ...more }) };
  };
  const messages = (...levels: Level[]) => lines.filter((line) => levels.includes(line.level)).map((line) => line.msg);
  return { log: under({}), lines, warnings: () => messages('warn'), messages };
}
