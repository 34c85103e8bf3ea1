// A Log that keeps every line it is given, for tests that assert on what the code logged (or print it when
// an assertion fails).
import type { Log } from '../infra/log.js';

export interface LoggedLine {
  level: 'debug' | 'info' | 'warn' | 'error';
  obj: object;
  /** The message, '' when none was given. */
  msg: string;
}

/** `log` records into `lines`; `warnings()` is the messages logged at warn. */
export function recordingLog(): { log: Log; lines: LoggedLine[]; warnings(): string[] } {
  const lines: LoggedLine[] = [];
  const at = (level: LoggedLine['level']) => (obj: object, msg?: string) => void lines.push({ level, obj, msg: msg ?? '' });
  const log: Log = { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error'), child: () => log };
  return { log, lines, warnings: () => lines.filter((line) => line.level === 'warn').map((line) => line.msg) };
}
