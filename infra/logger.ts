// Logs are JSON lines on stderr (stdout stays free for a stdio front end); `pretty` is for a person at a
// terminal, through pino-pretty (a dependency; the message below is for an install that lost it).
import { pino, type DestinationStream, type Logger } from 'pino';

export const LOG_FORMATS = ['json', 'pretty'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

export function createLogger(
  level: string,
  destination: DestinationStream = pino.destination({ dest: 2, sync: false }),
): Logger {
  return pino({ level, base: { name: 'mcp-gateway' } }, destination);
}

/** Where log lines go in a format: JSON straight to stderr, or pino-pretty's colourful lines, also on stderr. */
export async function logDestination(format: LogFormat): Promise<DestinationStream> {
  if (format === 'json') return pino.destination({ dest: 2, sync: false });
  let pretty: typeof import('pino-pretty')['build'];
  try {
    pretty = (await import('pino-pretty')).default.build;
  } catch {
    throw new Error(
      '--log-format pretty needs the pino-pretty package, which this install lacks: run `npm install pino-pretty` ' +
        'next to the gateway (a dependency of stateless-mcp-gateway), or drop the option (JSON is the default)',
    );
  }
  return pretty({ destination: 2, colorize: process.stderr.isTTY, sync: false });
}
