// What guardrails are configured with: plain shapes src/config/config.ts validates into, kept here so policy/
// never imports the config loader (as policy/settings.ts does for policies).

/** Where a rule looks: tool arguments (and prompt arguments), tool results, prompt messages, resource contents. */
export type GuardrailStage = 'arguments' | 'results' | 'prompts' | 'resources';
export const GUARDRAIL_STAGES: readonly GuardrailStage[] = ['arguments', 'results', 'prompts', 'resources'];

export type GuardrailAction = 'redact' | 'block' | 'log';

/** A detector of the config's own: a name (the redaction marker's) and an RE2 expression. */
export interface CustomDetectorSetting {
  name: string;
  regex: string;
}

/**
 * A company's own DLP or classifier, asked over HTTP (docs/guardrails.md, "A webhook of your own"). The call
 * itself lives in src/guardrails/webhook.ts: policy/ only checks the shape and the URL rule.
 */
export interface WebhookDetectorSetting {
  /** https://…, or http:// to this machine only (protocol/loopback.ts). */
  webhook: string;
  /** Names the marker (`[redacted:<name>]`), audit records and metrics; default `webhook`. */
  name?: string | undefined;
  /** How long the whole call may take; default 2000 ms. */
  timeoutMs?: number | undefined;
  /** When it fails (outage, timeout, malformed answer): pass (true) or refuse (false, the default). */
  failOpen?: boolean | undefined;
  /** Headers of its own (an Authorization written with ${VAR}); nothing of the gateway's is ever sent. */
  headers?: Readonly<Record<string, string>> | undefined;
}

export type DetectorSetting = string | CustomDetectorSetting | WebhookDetectorSetting;

export interface GuardrailSetting {
  name: string;
  on: readonly GuardrailStage[];
  /** Whom it applies to; left out: everyone (as `ids: ["*"]`). */
  principals?: { ids?: readonly string[]; groups?: readonly string[] } | undefined;
  /** Which servers' traffic; left out: every server's. */
  servers?: readonly string[] | undefined;
  /** Globs over /mcp names (as policies write them), per kind; left out: every item of that kind. */
  tools?: readonly string[] | undefined;
  prompts?: readonly string[] | undefined;
  resources?: readonly string[] | undefined;
  /** Endpoint paths (`/mcp`, `/servers/<name>/mcp`, `/profiles/<name>/mcp`, `/search/mcp`); left out: all. */
  endpoints?: readonly string[] | undefined;
  detect: readonly DetectorSetting[];
  action: GuardrailAction;
}
