// Connect and paste links (/connect/<id>, /secrets/<id>, the paste form's /secrets/form/<id>, the connections
// page's /connections/page/<id> and /connections/view/<id>) are single-use capabilities: whoever holds one
// can spend it. They belong in the answer to their own caller and nowhere else, so any text the gateway
// writes to a trace or a log that may quote an error message or a path (which carries the link) goes through
// here first. Cold path: errors only.

const LINK = /(\/(?:connect|secrets(?:\/form)?|connections\/(?:page|view))\/)[A-Za-z0-9_-]{20,}/g;

/** `text` with every link's id replaced by an ellipsis (the path stays, so the kind of link is still seen). */
export function withoutCapabilityLinks(text: string): string;
export function withoutCapabilityLinks(text: string | undefined): string | undefined;
export function withoutCapabilityLinks(text: string | undefined): string | undefined {
  return text === undefined ? undefined : text.replace(LINK, '$1…');
}
