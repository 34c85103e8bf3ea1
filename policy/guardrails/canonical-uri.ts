// Resource URIs in one spelling before any rule reads them. Deny rules and URI globs match the string the
// caller sent, while servers normalise what they serve: `UI://b__dashboard/pages/secret` or
// `demo://resource/dynamic/text/x/../1` would match no deny written for the canonical URI and still be served
// as it. So a URI whose scheme is not lower case, or whose path holds a `.` or `..` segment (percent-encoded
// too), is refused naming its canonical form by WHATWG URL rules, rather than matched one way and forwarded.

const SCHEME = /^([A-Za-z][A-Za-z0-9+.-]*):/;
/** A `.` or `..` segment (`%2e` counts as a dot, as WHATWG URL reads it) in a hierarchical path. */
const DOT_SEGMENT = /\/(?:\.|%2e){1,2}(?:[/?#\\]|$)/i;

/**
 * The canonical form of a URI that is not canonical, or undefined when it is canonical or no URI with a scheme
 * at all (a server's own naming). Only what is refused is changed: the scheme lower-cased and dot segments
 * removed as WHATWG URL removes them; every other character stays as written (a template's `{id}` included).
 */
export function nonCanonicalUri(uri: string): string | undefined {
  const scheme = SCHEME.exec(uri);
  if (scheme === null) return undefined;
  const upperScheme = /[A-Z]/.test(scheme[1]!);
  // Only a hierarchical path (`scheme:/…` or `scheme://…`) has segments; the query and fragment are not path.
  const rest = uri.slice(scheme[0].length);
  const end = rest.search(/[?#]/);
  const hierarchy = end === -1 ? rest : rest.slice(0, end);
  const dots = hierarchy.startsWith('/') && DOT_SEGMENT.test(hierarchy);
  if (!upperScheme && !dots) return undefined;
  const authorityEnd = hierarchy.startsWith('//') ? hierarchy.indexOf('/', 2) : 0;
  const authority = authorityEnd === -1 ? hierarchy : hierarchy.slice(0, authorityEnd);
  const path = authorityEnd === -1 ? '' : hierarchy.slice(authorityEnd);
  return `${scheme[1]!.toLowerCase()}:${authority}${dots ? withoutDotSegments(path) : path}${
    end === -1 ? '' : rest.slice(end)
  }`;
}

const SINGLE_DOT = /^(?:\.|%2e)$/i;
const DOUBLE_DOT = /^(?:\.|%2e){2}$/i;

/** WHATWG URL's path parsing, for dots: `.` is dropped, `..` drops the segment before; at the end, a `/` stays. */
function withoutDotSegments(path: string): string {
  const segments = path.split('/').slice(1);
  const out: string[] = [];
  segments.forEach((segment, i) => {
    const last = i === segments.length - 1;
    if (DOUBLE_DOT.test(segment)) {
      out.pop();
      if (last) out.push('');
    } else if (SINGLE_DOT.test(segment)) {
      if (last) out.push('');
    } else out.push(segment);
  });
  return `/${out.join('/')}`;
}
