// GET /config: the config in force, as an operator may see it. Every secret is replaced by "(redacted)":
// values of keys that name one (secret, password, token, key, sha256), every env and header value a server
// gets, passwords and query strings in URLs, and any string equal to a variable the config read with ${VAR}
// (whatever key it landed in). Which load it is tells an operator whether the last edit took.
export const REDACTED = '(redacted)';

const SECRET_KEY = /secret|password|passwd|token|^key$|sha256|authorization|credential/i;
/** Maps whose every value is handed on and may hold a secret: a server's env and headers, telemetry's headers. */
const SECRET_MAPS = new Set(['env', 'headers']);

export interface ConfigLoad {
  /** 0: the config the gateway started with; n: the n-th reload applied since. */
  reload: number;
  /** When it was applied (ISO 8601). */
  appliedAt: string;
}

export function configView(config: object, load: ConfigLoad, secretValues: readonly string[]): object {
  const secrets = new Set(secretValues.filter((value) => value.length >= 4));
  return { load, config: redact(config, secrets, false) };
}

function redact(value: unknown, secrets: ReadonlySet<string>, inSecretMap: boolean): unknown {
  if (typeof value === 'string') return inSecretMap || containsSecret(value, secrets) ? REDACTED : redactUrl(value);
  if (Array.isArray(value)) return value.map((item) => redact(item, secrets, inSecretMap));
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    if (key === 'envReads') continue; // names only, but nothing an operator needs here
    if (SECRET_KEY.test(key) && item !== undefined && typeof item !== 'boolean' && typeof item !== 'number')
      out[key] = REDACTED;
    else out[key] = redact(item, secrets, inSecretMap || SECRET_MAPS.has(key));
  }
  return out;
}

function containsSecret(value: string, secrets: ReadonlySet<string>): boolean {
  for (const secret of secrets) if (value.includes(secret)) return true;
  return false;
}

/** A URL keeps its scheme, host, port and path; a password in it and its query (tokens travel there) go. */
function redactUrl(value: string): string {
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) return value;
  try {
    const url = new URL(value);
    if (url.password) url.password = REDACTED;
    if (url.search) url.search = `?${REDACTED}`;
    return url.toString();
  } catch {
    return value;
  }
}
