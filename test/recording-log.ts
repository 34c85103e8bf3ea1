// A Log that keeps every line it is given, for tests that assert on what the code logged (or print it when
// an assertion fails).
import { Writable } from 'node:stream';
import type { Logger } from 'pino';
import type { Log } from '../infra/log.js';
import { createLogger } from '../infra/logger.js';

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
    const at = (level: Level) => (obj: object, msg?: string) =>
      void lines.push({
        level,
        obj: bound ? { ...bindings, ...obj } : (obj as Record<string, unknown>),
        msg: msg ?? '',
      });
    return {
      debug: at('debug'),
      info: at('info'),
      warn: at('warn'),
      error: at('error'),
      child: (more) => under({ ...bindings, ...more }),
    };
  };
  const messages = (...levels: Level[]) => lines.filter((line) => levels.includes(line.level)).map((line) => line.msg);
  return { log: under({}), lines, warnings: () => messages('warn'), messages };
}

export interface WrittenLog {
  /** The gateway's own logger (pino, as infra/logger.ts makes it) at the level asked, writing into memory. */
  logger: Logger;
  /** Everything written so far, as an operator would read it. */
  text(): string;
  /** Each line written so far. */
  lines(): string[];
  /** Each line written so far, parsed. */
  records(): any[];
}

/**
 * A real logger whose output the test reads back, for asserting on the log lines themselves (their fields, what they
 * leak).
 */
export function writtenLog(level: string): WrittenLog {
  const chunks: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      chunks.push(String(chunk));
      done();
    },
  });
  const text = () => chunks.join('');
  const lines = () => text().split('\n').filter(Boolean);
  return { logger: createLogger(level, sink), text, lines, records: () => lines().map((line) => JSON.parse(line)) };
}
