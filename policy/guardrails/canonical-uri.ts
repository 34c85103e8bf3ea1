// Resource URIs in one spelling before any rule reads them. Deny rules and URI globs match the string the
// caller sent, while servers normalise what they serve: `UI://b__dashboard/pages/secret` or
// `demo://resource/dynamic/text/x/../1` would match no deny written for the canonical URI and still be served
// as it. So a URI whose scheme is not lower case, or whose path holds a `.` or `..` segment (percent-encoded
// too), is refused naming its canonical form by WHATWG URL rules, rather than matched one way and forwarded.

const SCHEME = /^([A-Za-z][A-Za-z0-9+.-]*):/;
/** A `.` or `..` segment (`%2e` counts as a dot, as WHATWG URL reads it) in a hierarchical path. */
const DOT_SEGMENT = /\/(?:\.|%2e){1,2}(?:[/?#\\]|$)/i;

/**
 * The canonical form of a URI that is not canonical (as WHATWG URL would write it, or a description when it
 * cannot parse it), or undefined when it is canonical or no URI with a scheme at all (a server's own naming).
 */
export function nonCanonicalUri(uri: string): string | undefined {
  const scheme = SCHEME.exec(uri);
  if (scheme === null) return undefined;
  const upperScheme = /[A-Z]/.test(scheme[1]!);
  // Only a hierarchical path (`scheme:/…` or `scheme://…`) has segments; the query and fragment are not path.
  const rest = uri.slice(scheme[0].length);
  const end = rest.search(/[?#]/);
  const path = end === -1 ? rest : rest.slice(0, end);
  const dots = path.startsWith('/') && DOT_SEGMENT.test(path);
  if (!upperScheme && !dots) return undefined;
  try {
    return new URL(uri).href;
  } catch {
    // Not parseable by WHATWG rules: the scheme lower-cased is as near a canonical form as can be named.
    return scheme[1]!.toLowerCase() + uri.slice(scheme[1]!.length);
  }
}
