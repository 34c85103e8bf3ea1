// An operator's mistake (no clientId where the authorization server offers no registration, an issuer that
// cannot be reached) is for the operator's log, not for the person holding the link: the log gets the whole
// message with a short reference, the page gets the reference to quote. docs/connect-flow.md.
import { randomBytes } from 'node:crypto';
import type { Log } from '../../../infra/log.js';
import { escapeHtml, htmlPage, type PageContext } from './page.js';

export interface OperatorError {
  /** The page's heading ("Cannot connect to CRM"). */
  title: string;
  failure: unknown;
  server: string;
  /** What could not be done, for the log line. */
  what: string;
}

/** Logs the failure under a fresh reference and answers a page that shows only the reference. */
export function operatorErrorPage(c: PageContext, log: Log, error: OperatorError): Response {
  const reference = randomBytes(4).toString('hex').toUpperCase();
  const reason = error.failure instanceof Error ? error.failure.message : String(error.failure);
  log.warn({ server: error.server, reference, reason }, error.what);
  return htmlPage(
    c,
    502,
    error.title,
    '<p>The gateway could not go on, for a reason its operator has to fix. Nothing was connected.</p>' +
      `<p>Tell whoever runs the gateway this reference: <b><code>${escapeHtml(reference)}</code></b>. ` +
      'They will find what went wrong in its log.</p>',
  );
}
