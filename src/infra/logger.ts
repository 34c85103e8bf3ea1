// Logs are JSON lines on stderr (stdout stays free for a stdio front end).
import { pino, type Logger } from 'pino';

export function createLogger(level: string): Logger {
  return pino({ level, base: { name: 'mcp-gateway' } }, pino.destination({ dest: 2, sync: false }));
}
