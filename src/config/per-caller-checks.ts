// What `secrets:` on a server needs from the rest of the file (issue 34): a child per caller to put them in,
// the encrypted store to keep them, and a public URL for the page where a person pastes them.
import { z } from 'zod';

/** servers.<name>.secrets: environment variable → what the paste page asks for. */
export const perCallerSecrets = z
  .record(
    z
      .string()
      .regex(
        /^[A-Za-z_][A-Za-z0-9_]*$/,
        'a secret is named by the environment variable the child reads, e.g. GITHUB_PERSONAL_ACCESS_TOKEN',
      ),
    z.strictObject({
      /** Shown on the paste page, above the field: what to paste and where to get it. */
      prompt: z.string().min(1, 'say what to paste, e.g. "A GitHub token with repo scope"'),
    }),
  )
  .optional();

interface Keys {
  listen: { publicUrl?: string | undefined };
  credentials?: unknown;
  auth?: unknown;
  servers: Record<
    string,
    {
      transport: string;
      perCaller?: boolean;
      secrets?: Record<string, unknown> | undefined;
      env?: Record<string, string>;
    }
  >;
}

export function perCallerProblems(config: Keys): string[] {
  const problems: string[] = [];
  for (const [name, server] of Object.entries(config.servers)) {
    if (server.transport !== 'stdio' || server.secrets === undefined) continue;
    const at = `servers.${name}.secrets`;
    if (!server.perCaller)
      problems.push(`${at}: each caller's secret goes into a child of their own; add servers.${name}.perCaller: true`);
    if (!config.credentials)
      problems.push(
        `${at}: pasted secrets are kept encrypted; add  credentials: { key: \${CREDENTIALS_KEY} }  (openssl rand ` +
          `-base64 32)`,
      );
    if (config.listen.publicUrl === undefined)
      problems.push(
        `${at}: callers paste their secret on a page of the gateway; set listen.publicUrl to the gateway's URL as a ` +
          `browser reaches it`,
      );
    if (!config.auth)
      problems.push(
        `${at}: a secret is kept per caller, and without auth: every caller is "anonymous"; configure auth (apiKeys ` +
          `or jwt)`,
      );
    for (const variable of Object.keys(server.secrets)) {
      if (server.env && Object.hasOwn(server.env, variable))
        problems.push(
          `${at}.${variable}: also set in servers.${name}.env; each caller's own value replaces it, so remove it ` +
            `from env`,
        );
    }
  }
  return problems;
}
