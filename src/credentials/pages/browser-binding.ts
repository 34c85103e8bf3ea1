// Ties every later step of a connect or paste link to the browser that spent it. The confirming POST sets
// a random cookie; only its hash is sealed into the pending state that step makes (the sign-in's, the
// authorization request's, the paste form's), and each later step requires the cookie whose hash matches.
// A sign-in or authorization URL forwarded to someone else's browser therefore binds nothing. The cookie is
// HttpOnly, SameSite=Lax (the authorization server's redirect back is a cross-site top-level GET, which Lax
// lets through) and, when publicUrl is https, Secure with the __Host- prefix (no subdomain can set it).
// A browser that already holds a well-formed one keeps it, so two links opened at once both finish.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

const VALUE = /^[A-Za-z0-9_-]{43}$/;

export interface Binding {
  /** What is sealed into pending state: the hash, never the cookie itself. */
  hash: string;
  /** The Set-Cookie header to send, when the browser had no cookie yet. */
  setCookie?: string;
}

export class BrowserBinding {
  private readonly name: string;
  private readonly secure: boolean;

  constructor(publicUrl: string | undefined) {
    this.secure = publicUrl?.startsWith('https:') ?? false;
    this.name = this.secure ? '__Host-mcp-gateway-connect' : 'mcp-gateway-connect';
  }

  /** The binding of this request's browser: its cookie's, or a new cookie's. */
  bind(cookieHeader: string | undefined): Binding {
    const held = this.cookieIn(cookieHeader);
    if (held !== undefined) return { hash: hashOf(held) };
    const value = randomBytes(32).toString('base64url');
    const attributes = `; Path=/; HttpOnly; SameSite=Lax${this.secure ? '; Secure' : ''}`;
    return { hash: hashOf(value), setCookie: `${this.name}=${value}${attributes}` };
  }

  /** Whether this request comes from the browser whose binding `hash` is. */
  matches(cookieHeader: string | undefined, hash: string | undefined): boolean {
    const held = this.cookieIn(cookieHeader);
    if (held === undefined || hash === undefined) return false;
    const mine = Buffer.from(hashOf(held));
    const theirs = Buffer.from(hash);
    return mine.length === theirs.length && timingSafeEqual(mine, theirs);
  }

  private cookieIn(header: string | undefined): string | undefined {
    if (header === undefined) return undefined;
    for (const part of header.split(';')) {
      const at = part.indexOf('=');
      if (at < 0 || part.slice(0, at).trim() !== this.name) continue;
      const value = part.slice(at + 1).trim();
      if (VALUE.test(value)) return value;
    }
    return undefined;
  }
}

/** A 303 to `url` (the next step of a flow), binding the browser when it had no cookie yet. */
export function redirect(url: string, binding: Binding): Response {
  const headers = new Headers({ location: url, 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' });
  if (binding.setCookie !== undefined) headers.append('set-cookie', binding.setCookie);
  return new Response(null, { status: 303, headers });
}

function hashOf(value: string): string {
  return createHash('sha256').update(value).digest('base64url');
}

/** The words a page says when a later step arrives from another browser. */
export const OTHER_BROWSER =
  'This step was started in another browser (or the browser lost its cookies), so it cannot be finished here, and ' +
  'nothing was connected. If someone sent you this address, do not continue. If you started it yourself, go back ' +
  'to your client, ask for a new link and open it in the browser you will finish it in.';
