// sandbox: (top level, the default for every stdio server) and servers.<name>.sandbox (its own keys win;
// `false` runs that server bare). Validated here; merged and made absolute (paths relative to the config
// file's folder) by effectiveSandbox once the whole config parsed. Enforced by bridge/sandbox/.
import path from 'node:path';
import { z } from 'zod';
import type { SandboxPolicy } from '../../bridge/sandbox/index.js';
import { MiB, int } from './values.js';

const paths = z.array(z.string().min(1, "give a path, relative to the config file's folder or absolute"));
const HOST = /^(\*|[A-Za-z0-9.-]+(:\d{1,5})?)$/;

/** Every key optional, with no defaults: a server's block is laid over the top-level one key by key. */
export const sandboxBlock = z.strictObject({
  network: z
    .strictObject({
      /** Hosts (host or host:port) the child may reach; [] none (the default); ["*"] every host. */
      allow: z.array(z.string().regex(HOST, 'give a host name, host:port, or "*" for every host')),
    })
    .refine((net) => !net.allow.includes('*') || net.allow.length === 1, {
      error: '"*" already allows every host; give it alone or list hosts without it',
    })
    .optional(),
  /** What the child may read besides its runtime and its cwd. */
  read: paths.optional(),
  /** What the child may write; a private tmp, home and data folder are always there. */
  write: paths.optional(),
  /** Files or folders inside those the child must not see; the gateway's own files are always hidden. */
  hide: paths.optional(),
  /** RLIMIT_DATA: the child's heap and private memory, in bytes. */
  memoryBytes: int()
    .pipe(z.number().min(64 * MiB, 'at least 67108864 (64 MiB): a runtime such as Node needs that to start'))
    .optional(),
  /** RLIMIT_CPU: processor seconds over the child's life; past it the kernel stops the child. */
  cpuSeconds: int().pipe(z.number().min(1)).optional(),
  /** RLIMIT_NPROC: processes and threads at once in the child's sandbox (Node itself runs about 11 threads). */
  processes: int().pipe(z.number().min(16, 'at least 16: Node alone runs about 11 threads')).optional(),
  /** RLIMIT_NOFILE: open files and sockets per process. */
  openFiles: int().pipe(z.number().min(32)).optional(),
  /** Size of the private tmpfs holding the child's /tmp, home and data folder. */
  tmpBytes: int().pipe(z.number().min(MiB)).optional(),
});

export type SandboxBlock = z.infer<typeof sandboxBlock>;

/** servers.<name>.sandbox: a block, `true` (the top-level block, or the defaults), or `false` (bare). */
export const serverSandbox = z.union([z.boolean(), sandboxBlock]).optional();

const DEFAULT_TMP_BYTES = 64 * MiB;

/**
 * The policy a server runs under, or undefined to run it bare: none when neither level asks for one or the
 * server says `false`. `gatewayFiles` (the config, credential and pins files) are hidden from every child.
 */
export function effectiveSandbox(
  top: SandboxBlock | undefined,
  own: SandboxBlock | boolean | undefined,
  baseDir: string,
  gatewayFiles: readonly string[],
): SandboxPolicy | undefined {
  if (own === false || (own === undefined && top === undefined)) return undefined;
  const block: SandboxBlock = { ...top, ...(own === true ? {} : own) };
  const absolute = (list: readonly string[] | undefined) => (list ?? []).map((p) => path.resolve(baseDir, p));
  const allow = block.network?.allow ?? [];
  return {
    network:
      allow.length === 0 ? { kind: 'none' } : allow[0] === '*' ? { kind: 'all' } : { kind: 'allow', hosts: allow },
    read: absolute(block.read),
    write: absolute(block.write),
    hide: [...absolute(block.hide), ...gatewayFiles],
    memoryBytes: block.memoryBytes,
    cpuSeconds: block.cpuSeconds,
    processes: block.processes,
    openFiles: block.openFiles,
    tmpBytes: block.tmpBytes ?? DEFAULT_TMP_BYTES,
  };
}
