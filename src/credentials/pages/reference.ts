// An operator's mistake (no clientId where the authorization server offers no registration, an issuer that
// cannot be reached) is for the operator's log, not for the person holding the link: the log gets the whole
// message with a short reference, the page gets the reference to quote. docs/connect-flow.md.
import { randomBytes } from 'node:crypto';
import type { Log } from '../../../infra/log.js';
import { htmlPage, type PageContext, escapeHtml } from './page.js';

/** Logs `failure` under a fresh reference and answers a page that shows only the reference. */
export function operatorErrorPage(
  c: PageContext,
  log: Log,
  title: string,
  failure: unknown,
  context: Record<string, unknown>,
  what: string,
): Response {
  const reference = randomBytes(4).toString('hex').toUpperCase();
  log.warn({ ...context, reference, reason: (failure as Error)?.message ?? String(failure) }, what);
  return htmlPage(
    c,
    502,
    title,
    '<p>The gateway could not go on, for a reason its operator has to fix. Nothing was connected.</p>' +
      `<p>Tell whoever runs the gateway this reference: <b><code>${escapeHtml(reference)}</code></b>. ` +
      'They will find what went wrong in its log.</p>',
  );
}
