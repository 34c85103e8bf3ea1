// What every POST of the connect flow passes before its handler runs: the request must come from the
// gateway's own pages (Origin equal to listen.publicUrl's origin, or, from a client that sends no Origin,
// Sec-Fetch-Site same-origin or none), so a page elsewhere cannot submit a form from someone's browser;
// and its body is capped before anything parses it (hono's bodyLimit: a declared length over the cap is
// refused before a byte is read, a streamed one as soon as it passes the cap). Both refusals are pages.
import type { MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { htmlPage, escapeHtml } from './page.js';

/** The confirming POSTs and revocations: a link id and little else. */
export const CONFIRM_BODY_BYTES = 4 * 1024;
/** A paste: room for a multi-line PEM key or two. */
export const PASTE_BODY_BYTES = 64 * 1024;

/** The Origin check, then the body cap, for one POST route. */
export function formGuard(publicUrl: string | undefined, maxBytes: number): MiddlewareHandler {
  const origin = publicUrl === undefined ? undefined : new URL(publicUrl).origin;
  const capped = bodyLimit({
    maxSize: maxBytes,
    onError: (c) =>
      htmlPage(
        c,
        413,
        'Too large',
        `<p>This form sent more than ${Math.round(maxBytes / 1024)} KiB, more than any of the gateway's forms ` +
          'needs. Nothing was saved. Go back to your client and try the call again for a new link.</p>',
      ),
  });
  return async (c, next) => {
    const refusal = originProblem(origin, c.req.raw.headers);
    if (refusal !== undefined) return htmlPage(c, 403, 'Refused', `<p>${escapeHtml(refusal)}</p>`);
    return capped(c, next);
  };
}

/** Why a POST is not from the gateway's own page, or undefined when it is. */
export function originProblem(expected: string | undefined, headers: Headers): string | undefined {
  const origins = headers.get('origin');
  if (origins !== null) {
    // Several Origin headers arrive joined by a comma: never one of ours.
    if (expected !== undefined && origins === expected) return undefined;
    return (
      `This form was sent from ${origins === 'null' ? 'a page with no origin' : `another site (${origins})`}, not ` +
      "from the gateway's own page, so it was refused and nothing happened. Open the link you were given directly."
    );
  }
  const site = headers.get('sec-fetch-site');
  if (site === 'same-origin' || site === 'none') return undefined;
  return (
    "This form was not sent from the gateway's own page (the browser said neither where it came from nor that it " +
    'was the same site), so it was refused and nothing happened. Open the link you were given directly.'
  );
}
