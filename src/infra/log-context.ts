// What a log line adds about the request it was written for (trace_id and span_id) when it is written inside
// RequestSpan.run, whose async context installs the lookup on its first use. The request path does not use
// it (the edge and the layers below hand the ids to their lines: traceFields in src/protocol/trace.ts), so
// in a running gateway every line gets nothing more from here.

const NOTHING: Readonly<Record<string, string>> = Object.freeze({});

let lookup: (() => Readonly<Record<string, string>> | undefined) | undefined;

export function setLogContext(find: (() => Readonly<Record<string, string>> | undefined) | undefined): void {
  lookup = find;
}

/** pino's mixin: the current request's fields (a fresh object), or nothing. */
export function logContext(): Readonly<Record<string, string>> {
  return lookup?.() ?? NOTHING;
}

/** pino's mixinMergeStrategy: its default writes the line's fields into the mixin's object, which for "nothing" is shared. */
export function mergeLogContext(fields: object, context: object): object {
  return context === NOTHING ? fields : Object.assign(context, fields);
}
