// The one HTTP request a tool call makes, over an undici Pool bound to the base URL's origin: the pool can
// reach no other host, whatever a document or an argument says. Redirects are answers like any other (undici
// follows none), so a 3xx elsewhere is never followed. The answer is read up to maxResponseBytes; past it the
// request is abandoned. A timeout or the caller's cancellation aborts the request on the wire.
import { Pool } from 'undici';
import type { CancelSignal } from '../../protocol/cancel.js';
import type { RestRequest } from './request.js';

export type RestOutcome =
  | {
      readonly kind: 'answer';
      readonly status: number;
      readonly contentType: string;
      readonly body: Buffer;
      /** WWW-Authenticate of a 401 or 403: whether the caller's credential was what was refused. */
      readonly challenge?: string | undefined;
    }
  | { readonly kind: 'too-large' }
  | { readonly kind: 'timeout' }
  | { readonly kind: 'cancelled' }
  | { readonly kind: 'failed'; readonly message: string };

export interface RestClientSettings {
  readonly origin: string;
  readonly timeoutMs: number;
  readonly maxResponseBytes: number;
}

export class RestClient {
  private readonly pool: Pool;

  constructor(private readonly settings: RestClientSettings) {
    this.pool = new Pool(settings.origin, { connections: 64, keepAliveTimeout: 30_000 });
  }

  async send(request: RestRequest, signal: CancelSignal | undefined): Promise<RestOutcome> {
    const controller = new AbortController();
    let why: 'timeout' | 'cancelled' | undefined;
    const timer = setTimeout(() => {
      why = 'timeout';
      controller.abort();
    }, this.settings.timeoutMs);
    const onCancel = (): void => {
      why ??= 'cancelled';
      controller.abort();
    };
    if (signal?.aborted) onCancel();
    signal?.addEventListener('abort', onCancel, { once: true });
    try {
      return await this.exchange(request, controller.signal);
    } catch (error) {
      if (why) return { kind: why };
      return { kind: 'failed', message: (error as Error).message };
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onCancel);
    }
  }

  private async exchange(request: RestRequest, signal: AbortSignal): Promise<RestOutcome> {
    const response = await this.pool.request({
      method: request.method as 'GET',
      path: request.path,
      headers: request.headers,
      ...(request.body !== undefined && { body: request.body }),
      signal,
    });
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of response.body as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > this.settings.maxResponseBytes) {
        response.body.destroy();
        return { kind: 'too-large' };
      }
      chunks.push(chunk);
    }
    const type = response.headers['content-type'];
    const contentType = (Array.isArray(type) ? type[0] : type) ?? '';
    const status = response.statusCode;
    const challenge = status === 401 || status === 403 ? response.headers['www-authenticate'] : undefined;
    return {
      kind: 'answer',
      status,
      contentType,
      body: Buffer.concat(chunks),
      challenge: Array.isArray(challenge) ? challenge.join(', ') : challenge,
    };
  }

  /** Requests still in flight are cut off: the gateway has already waited for them (listen.drainMs). */
  close(): Promise<void> {
    return this.pool.destroy();
  }
}
