// The paste form of a paste link (servers.<name>.secrets): one password field per secret and the hidden id
// whose POST to /secrets/save stores them. Shown by GET /secrets/<link> without sign-in (the POST spends the
// link), and after the sign-in (/connect/signed-in) with it. docs/connect-flow.md.
import type { SecretPending } from '../record.js';
import { escapeHtml, htmlPage, type PageContext } from './page.js';

/** The name of a secret's field in the form. */
export const SECRET_FIELD = 'value:';

/**
 * What a paste form's id keeps once the person signed in: the link, and the browser that confirmed it (only
 * that browser may save).
 */
export interface SecretFormPending {
  step: 'secret-form';
  link: SecretPending;
  binding: string;
}

export interface SecretForm {
  /** The id the form posts: the link's own (no sign-in) or a SecretFormPending's. */
  id: string;
  link: SecretPending;
  /** Variable → prompt. */
  wanted: Readonly<Record<string, { prompt: string }>>;
  displayName: string;
}

export function secretFormPage(c: PageContext, form: SecretForm, headers: Record<string, string> = {}): Response {
  const { link, displayName } = form;
  const fields = Object.entries(form.wanted)
    .map(
      ([name, { prompt }]) =>
        `<p><label>${escapeHtml(prompt)} (<code>${escapeHtml(name)}</code>)<br><input type="password" ` +
        `name="${SECRET_FIELD}${escapeHtml(name)}" autocomplete="off" required></label></p>`,
    )
    .join('');
  const body =
    `<p>${escapeHtml(displayName)} runs as <b>${escapeHtml(link.principal)}</b> with what you paste here. It is ` +
    `kept encrypted, used only for your own ${escapeHtml(displayName)} process, and you can revoke it on your ` +
    'connections page (its link comes with <code>GET /connections</code>, asked with your usual credentials).</p>' +
    `<p>Continue only if you are ${escapeHtml(link.principal)} and you asked your MCP client for this just now.</p>` +
    `<form method="post" action="/secrets/save"><input type="hidden" name="link" value="${escapeHtml(form.id)}">` +
    `${fields}<button type="submit">Save</button></form>`;
  return htmlPage(c, 200, `Connect ${displayName}`, body, headers);
}
