// The hot path talks to Node's own request and response objects (through @hono/node-server's bindings)
// rather than Fetch Request/Response: no undici Request, no web streams, no AbortController per request.
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { CancelSignal } from '../protocol/cancel.js';
import type { HeaderSource } from './request-rules.js';

/** Node's lower-cased header record seen through the Fetch-style `get`. */
export class NodeHeaders implements HeaderSource {
  constructor(private readonly headers: IncomingHttpHeaders) {}

  get(name: string): string | null {
    const value = this.headers[name];
    if (value === undefined) return null;
    return Array.isArray(value) ? value.join(', ') : value;
  }
}

/** Reads the body as UTF-8 text, or undefined once it exceeds maxBytes (the rest is left unread). */
export function readBody(incoming: IncomingMessage, maxBytes: number): Promise<string | undefined> {
  const declared = Number(incoming.headers['content-length']);
  if (declared > maxBytes) return Promise.resolve(undefined);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    const onData = (chunk: Buffer): void => {
      total += chunk.length;
      if (total > maxBytes) {
        done();
        resolve(undefined);
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => {
      done();
      resolve(chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks, total).toString('utf8'));
    };
    const onError = (error: Error): void => {
      done();
      reject(error);
    };
    function done(): void {
      incoming.off('data', onData);
      incoming.off('end', onEnd);
      incoming.off('error', onError);
    }
    incoming.on('data', onData);
    incoming.on('end', onEnd);
    incoming.on('error', onError);
  });
}

/** Aborts when the client closes the connection before its response was finished. */
export class ClientGone implements CancelSignal {
  aborted = false;
  private listeners: (() => void)[] = [];

  constructor(outgoing: ServerResponse) {
    outgoing.once('close', () => {
      if (outgoing.writableFinished) return;
      this.aborted = true;
      const listeners = this.listeners;
      this.listeners = [];
      for (const listener of listeners) listener();
    });
  }

  addEventListener(_type: 'abort', listener: () => void): void {
    this.listeners.push(listener);
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    const at = this.listeners.indexOf(listener);
    if (at !== -1) this.listeners.splice(at, 1);
  }
}
