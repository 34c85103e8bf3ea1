// The HTML every page of the connect flow answers with (connect links, paste links, their sign-in, the
// connections page): one plain, readable shell with no framework and no script, and the headers that keep
// it out of caches, out of Referer headers and out of frames (a framed confirmation page could be clicked
// through by a page elsewhere). docs/connect-flow.md.
import type { HttpBindings } from '@hono/node-server';
import type { Context } from 'hono';

export type PageContext = Context<{ Bindings: HttpBindings }>;

export type PageStatus = 200 | 400 | 403 | 404 | 410 | 413 | 502;

/** Sent with every page of these flows. */
export const PAGE_HEADERS: Readonly<Record<string, string>> = {
  'cache-control': 'no-store',
  // Not no-referrer: under it a browser sends `Origin: null` with the page's own form, which form-guard.ts refuses.
  // same-origin sends no Referer (which would carry a link) to any other site.
  'referrer-policy': 'same-origin',
  // No form-action: a browser applies it to the confirming POST's redirect to the authorization server too.
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
};

const STYLE =
  'body{font:16px/1.5 system-ui,sans-serif;max-width:38rem;margin:2rem auto;padding:0 1rem;color:#1b1b1b}' +
  'dl{display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1rem}dt{font-weight:600}dd{margin:0}' +
  'button{font:inherit;padding:.5rem 1rem;cursor:pointer}input,textarea{font:inherit;width:100%}' +
  'table{border-collapse:collapse}td,th{padding:.25rem .75rem .25rem 0;text-align:left}';

/** A page whose body is `html` (already escaped where it quotes anything); `headers` go beside PAGE_HEADERS. */
export function htmlPage(
  c: PageContext,
  status: PageStatus,
  title: string,
  html: string,
  headers: Record<string, string | string[]> = {},
): Response {
  const text =
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>` +
    `<meta name="viewport" content="width=device-width"><style>${STYLE}</style></head>` +
    `<body><main><h1>${escapeHtml(title)}</h1>${html}</main></body></html>`;
  const response = c.html(text, status, PAGE_HEADERS);
  for (const [name, value] of Object.entries(headers))
    for (const one of Array.isArray(value) ? value : [value]) response.headers.append(name, one);
  return response;
}

/** A page saying one thing in plain text. */
export function textPage(c: PageContext, status: PageStatus, title: string, text: string): Response {
  return htmlPage(c, status, title, `<p>${escapeHtml(text)}</p>`);
}

/** A link that cannot be used (any more): the same words whatever the reason, so nothing is told about ids. */
export function linkUnusable(c: PageContext): Response {
  return textPage(
    c,
    410,
    'This link cannot be used',
    'It was used already, it expired, or it was never issued. Go back to your client and try the call again for a ' +
      'new link.',
  );
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}
