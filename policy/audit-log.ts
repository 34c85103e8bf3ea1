// The audit log: one JSON line per decision, to stderr or a file of its own. Never the caller's token,
// and tool arguments only when `audit.arguments` is on (they may hold personal data).
import { pino, type Logger } from 'pino';
import type { AuditSetting } from './settings.js';

export interface AuditEntry {
  principal: string;
  via: string;
  endpoint: string;
  method: string;
  /** The tool or prompt name, or resource URI, the request is about. */
  target?: string;
  decision: 'allow' | 'deny';
  /** The rule that decided (a policy's name, a deny, a condition, an authentication failure, a rate limit). */
  rule: string;
  latencyMs: number;
  arguments?: unknown;
  /** A guardrail's finding: its action, where it looked, and which detectors matched (never the text matched). */
  guardrail?: { action: string; stage: string; detectors: readonly string[]; webhookFailure?: string };
  /** From the request's W3C traceparent, when it has one. */
  traceId?: string;
  /** The gateway's own span of this request, when it traces: the ids its collector knows it by. */
  trace_id?: string;
  span_id?: string;
}

export class AuditLog {
  private readonly logger: Logger;
  private readonly stream: ReturnType<typeof pino.destination>;
  readonly includeArguments: boolean;

  constructor(setting: AuditSetting) {
    const dest = setting.destination === 'stderr' ? 2 : setting.destination === 'stdout' ? 1 : setting.destination;
    // A file is written synchronously: an audit line is not lost when the process dies right after the decision.
    this.stream = pino.destination({
      dest,
      sync: typeof dest === 'string',
      mkdir: typeof dest === 'string',
      append: true,
    });
    this.logger = pino({ base: { name: 'mcp-gateway', audit: true }, messageKey: 'msg' }, this.stream);
    this.includeArguments = setting.arguments;
  }

  record(entry: AuditEntry): void {
    this.logger.info(entry, 'decision');
  }

  /** Writes out what is buffered (on shutdown, and in tests before reading the file). */
  flush(): Promise<void> {
    // A file opens asynchronously; lines written before it is open wait in the buffer until it is.
    return new Promise((resolve) => {
      const flush = (): void => this.stream.flush(() => resolve());
      // SonicBoom's types omit its `fd`: -1 until a file is open.
      const stream = this.stream;
      if ('fd' in stream && typeof stream.fd === 'number' && stream.fd >= 0) flush();
      else this.stream.once('ready', flush);
    });
  }
}
