// One connection to a server of the 2024-11-05 HTTP+SSE transport: a GET opens the server's event stream,
// whose first event (`endpoint`) names the URL every client message is POSTed to; the server's messages
// (answers, notifications, its own requests) all arrive as `message` events on that one stream. Like a stdio
// pipe, the stream does not say which request a message belongs to. The endpoint must be on the server's own
// origin: the gateway never sends its requests (or the configured credentials) anywhere else.
import { Pool } from 'undici';
import type { Log } from '../../infra/log.js';
import { parseJson } from '../../protocol/exact-json.js';
import { SseReader } from '../sse-reader.js';

export interface SseConnectionSettings {
  url: string;
  /** Configured headers (credentials), sent on the GET and on every POST. */
  headers: Readonly<Record<string, string>>;
  /** Largest event accepted, in characters. */
  maxEventChars: number;
}

export interface SseConnectionEvents {
  /** A JSON message from the server. */
  message(value: unknown): void;
  /** A POST of one of the gateway's messages was refused or failed (the message never reached the server). */
  refused(message: unknown, why: string): void;
  /** The event stream ended or broke: the connection is dead. */
  closed(why: string): void;
}

const RESERVED = new Set(['content-type', 'content-length', 'accept', 'host', 'connection', 'transfer-encoding']);

export class SseConnection {
  private readonly pool: Pool;
  private readonly abort = new AbortController();
  private readonly headers: Record<string, string> = {};
  private postUrl: URL | undefined;
  private open = false;
  private ended = false;

  constructor(
    private readonly settings: SseConnectionSettings,
    private readonly events: SseConnectionEvents,
    private readonly log: Log,
  ) {
    const url = new URL(settings.url);
    for (const [name, value] of Object.entries(settings.headers))
      if (!RESERVED.has(name.toLowerCase())) this.headers[name.toLowerCase()] = value;
    this.pool = new Pool(url.origin, { headersTimeout: 0, bodyTimeout: 0 });
  }

  get alive(): boolean {
    return this.open && !this.ended;
  }

  /** Opens the event stream and waits for its endpoint event; throws saying what went wrong. */
  async connect(timeoutMs: number): Promise<void> {
    const url = new URL(this.settings.url);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      this.abort.abort();
    }, timeoutMs);
    try {
      const answer = await this.pool.request({
        path: `${url.pathname}${url.search}`,
        method: 'GET',
        headers: { ...this.headers, accept: 'text/event-stream' },
        signal: this.abort.signal,
      });
      const type = String(answer.headers['content-type'] ?? '');
      if (answer.statusCode !== 200 || !type.startsWith('text/event-stream')) {
        const text = (await answer.body.text().catch(() => '')).slice(0, 200);
        throw new Error(
          `GET answered HTTP ${answer.statusCode} ${type || '(no content type)'}${text ? `: ${text}` : ''}, not an ` +
            `event stream`,
        );
      }
      const endpoint = new Promise<URL>((resolve, reject) => {
        const reader = new SseReader((data, event) => {
          if (event === 'endpoint' && this.postUrl === undefined) {
            const named = safeUrl(data, url);
            if (named === undefined || named.origin !== url.origin)
              reject(new Error(`its endpoint event names ${JSON.stringify(data)}, not a URL on ${url.origin}`));
            else resolve(named);
          } else if (event === 'message') this.onMessage(data);
        }, this.settings.maxEventChars);
        void this.read(answer.body, reader).then((why) => {
          reject(new Error(`the event stream ended before its endpoint event (${why})`));
          this.end(why);
        });
      });
      this.postUrl = await endpoint;
      this.open = true;
    } catch (error) {
      this.close();
      throw new Error(timedOut ? `no endpoint event within ${timeoutMs} ms` : (error as Error).message);
    } finally {
      clearTimeout(timer);
    }
  }

  /** POSTs one message to the endpoint; a failure is reported through events.refused, never thrown. */
  send(message: unknown): void {
    const url = this.postUrl;
    if (url === undefined || this.ended) {
      this.events.refused(message, 'the event stream is closed');
      return;
    }
    const body = JSON.stringify(message);
    void this.pool
      .request({
        path: `${url.pathname}${url.search}`,
        method: 'POST',
        headers: { ...this.headers, 'content-type': 'application/json' },
        body,
      })
      .then(async (answer) => {
        const text = await answer.body.text().catch(() => '');
        if (answer.statusCode < 200 || answer.statusCode >= 300)
          this.events.refused(
            message,
            `POST answered HTTP ${answer.statusCode}${text ? `: ${text.slice(0, 200)}` : ''}`,
          );
      })
      .catch((error: Error) => this.events.refused(message, `POST failed: ${error.message}`));
  }

  close(): void {
    this.ended = true;
    this.abort.abort();
    void this.pool.destroy().catch(() => {});
  }

  private onMessage(data: string): void {
    let value: unknown;
    try {
      value = parseJson(data);
    } catch {
      this.log.warn({ head: data.slice(0, 120) }, 'skipped an event-stream message that is not JSON');
      return;
    }
    this.events.message(value);
  }

  /** Feeds the stream to the reader until it ends; resolves with how it ended. */
  private async read(body: AsyncIterable<Buffer>, reader: SseReader): Promise<string> {
    try {
      for await (const chunk of body) {
        if (!reader.push(chunk)) return `an event larger than ${this.settings.maxEventChars} characters`;
      }
      reader.end();
      return 'the server ended it';
    } catch (error) {
      return `it broke: ${(error as Error).message}`;
    }
  }

  private end(why: string): void {
    if (this.ended) return;
    const wasOpen = this.open;
    this.close();
    if (wasOpen) this.events.closed(why);
  }
}

function safeUrl(text: string, base: URL): URL | undefined {
  try {
    return new URL(text.trim(), base);
  } catch {
    return undefined;
  }
}

/**
 * Whether the URL serves an HTTP+SSE event stream (a GET whose first event is endpoint); the stream is closed again.
 */
export async function speaksHttpSse(settings: SseConnectionSettings, timeoutMs: number, log: Log): Promise<boolean> {
  const quiet = { message() {}, refused() {}, closed() {} };
  const connection = new SseConnection(settings, quiet, log);
  try {
    await connection.connect(timeoutMs);
    return true;
  } catch {
    return false;
  } finally {
    connection.close();
  }
}
