// One run of a stdio child: spawn it in its own process group, frame its stdout into JSON messages,
// send its stderr to the log, and stop it with the spec's ladder (close stdin, SIGTERM, SIGKILL).
// Spawned through execa: it resolves commands as each platform runs them (on Windows `npx` is an
// `npx.cmd` shim a plain spawn cannot start), and it reports a spawn that fails (command not found, a
// `cwd` that is a file) in its result instead of throwing it at the caller, where one server's typo
// could take the whole gateway down. Its cost (about 3 MB of resident memory) is accepted for that.
import { existsSync } from 'node:fs';
import type { Writable } from 'node:stream';
import { execa, type Result } from 'execa';
import { onExit } from 'signal-exit';
import type { Log } from '../../infra/log.js';
import { parseJson } from '../../protocol/exact-json.js';
import { LineFramer } from './line-framer.js';

export interface StdioCommand {
  command: string;
  args: string[];
  /** The child's entire environment (the gateway's own is not added). */
  env: Record<string, string>;
  cwd: string;
  /** Largest stdout line accepted; longer lines are dropped and reported. */
  maxLineBytes: number;
}

export interface ExitInfo {
  code: number | null;
  signal: string | null;
  /** Why the process could not run at all (for example the command was not found). */
  spawnError: string | undefined;
}

export interface StdioProcessEvents {
  message(message: unknown): void;
  /** A stdout line over maxLineBytes; `head` and `tail` are its first and last bytes. */
  oversized(bytes: number, head: string, tail: string): void;
  exit(info: ExitInfo): void;
}

const STDERR_LINE_CAP = 64 * 1024;
/**
 * Lines of stderr kept per child: enough for a runtime's whole crash report (Node 22 prints 16 lines for a missing
 * module).
 */
const STDERR_TAIL = 30;
/** After the child exits, how long its stdout may take to deliver what it wrote last. */
const EXIT_DRAIN_MS = 100;
/** After SIGKILL, how long the exit may take to be heard before the child is given up as unkillable. */
const EXIT_AFTER_KILL_MS = 2_000;
const live = new Set<number>();

// A gateway that dies without its shutdown path (an exit, an uncaught exception, a signal it does not handle)
// must not leave children behind. execa's own `cleanup` skips detached children, and only kills the child,
// not its group; signal-exit is the library it uses for it, here killing every live group.
onExit(() => {
  for (const pid of live) killGroup(pid, 'SIGKILL');
});

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // The group is already gone.
  }
}

export class StdioProcess {
  readonly pid: number | undefined;
  readonly exited: Promise<ExitInfo>;
  private readonly child: Child;
  private readonly stdin: Writable | undefined;
  private readonly stderrTail: string[] = [];
  private hasExited = false;
  private outbox = '';
  private flushQueued = false;
  private stdoutEnded = false;
  private stderrEnded = false;
  private readonly resolveExited: (info: ExitInfo) => void;

  constructor(
    spec: StdioCommand,
    private readonly log: Log,
    private readonly events: StdioProcessEvents,
  ) {
    this.child = spawnChild(spec);
    this.pid = this.child.pid;
    let resolveExited!: (info: ExitInfo) => void;
    this.exited = new Promise((resolve) => (resolveExited = resolve));
    this.resolveExited = resolveExited;
    // A process that never started has no pid and emits no 'exit'; execa's result (never a rejection, with
    // reject: false) says why. Once it runs, its 'exit' below is what counts.
    void this.child.then((result) => {
      if (this.pid === undefined) this.finish({ code: null, signal: null, spawnError: shortSpawnError(result, spec) });
    });
    if (this.pid === undefined) {
      this.stdin = undefined;
      return;
    }
    live.add(this.pid);
    this.stdin = this.child.stdin;
    this.readStdout(this.child, spec.maxLineBytes);
    this.readStderr(this.child);
    // Writing to a child that just died raises EPIPE on stdin; the exit path reports it.
    this.child.stdin.on('error', () => {});
    this.watchExit(this.child);
  }

  /** Each stdout line is one JSON message; anything else is logged and skipped. */
  private readStdout(child: Child, maxLineBytes: number): void {
    const { log, events } = this;
    const framer = new LineFramer(maxLineBytes, {
      line: (text) => {
        let message: unknown;
        try {
          message = parseJson(text);
        } catch {
          log.warn(
            { line: text.slice(0, 200) },
            'skipped a stdout line that is not JSON (stdout is for MCP messages only)',
          );
          return;
        }
        try {
          events.message(message);
        } catch (error) {
          // Nothing a child writes may take the gateway down.
          log.error(
            { err: (error as Error).message, line: text.slice(0, 200) },
            'failed to handle a message from the child',
          );
        }
      },
      oversized: (bytes, head, tail) => events.oversized(bytes, head, tail),
    });
    child.stdout.on('data', (chunk: Buffer) => framer.push(chunk));
    // A read error ends the pipe too; the process's exit is what reports it.
    child.stdout.on('error', (error) => log.warn({ err: error.message }, 'child stdout failed'));
    child.stdout.once('end', () => {
      framer.end();
      this.stdoutEnded = true;
    });
  }

  private readStderr(child: Child): void {
    const framer = new LineFramer(STDERR_LINE_CAP, {
      line: (text) => {
        if (this.stderrTail.push(text) > STDERR_TAIL) this.stderrTail.shift();
        this.log.info({ stderr: text }, 'child stderr');
      },
      oversized: (bytes) => this.log.warn({ bytes }, 'dropped an over-long stderr line'),
    });
    child.stderr.on('data', (chunk: Buffer) => framer.push(chunk));
    child.stderr.on('error', (error) => this.log.warn({ err: error.message }, 'child stderr failed'));
    // A last line without a newline is often the one that says why the child died.
    child.stderr.once('end', () => {
      framer.end();
      this.stderrEnded = true;
    });
  }

  private watchExit(child: Child): void {
    // The process's own exit, not the end of its pipes: a grandchild can hold stdout open for ever.
    // Its last answers may still be in the pipe, so give stdout a moment to drain first.
    child.once('exit', (code, signal) => {
      const info: ExitInfo = { code, signal, spawnError: undefined };
      if (this.stdoutEnded && this.stderrEnded) return this.finish(info);
      const timer = setTimeout(() => this.finish(info), EXIT_DRAIN_MS);
      const drained = (): void => {
        if (!this.stdoutEnded || !this.stderrEnded) return;
        clearTimeout(timer);
        this.finish(info);
      };
      child.stdout.once('end', () => setImmediate(drained));
      child.stderr.once('end', () => setImmediate(drained));
    });
  }

  private finish(info: ExitInfo): void {
    if (this.hasExited) return;
    this.hasExited = true;
    if (this.pid !== undefined) {
      killGroup(this.pid, 'SIGKILL'); // grandchildren the child left behind
      live.delete(this.pid);
    }
    this.events.exit(info);
    this.resolveExited(info);
  }

  get alive(): boolean {
    return !this.hasExited;
  }

  /** The last few stderr lines, for error messages that help the user see why a child failed. */
  recentStderr(): string {
    return this.stderrTail.join('\n');
  }

  /**
   * Queues one message. Messages sent in the same turn of the event loop reach the child in one write:
   * under load that is one pipe write (and one wake-up of the child) for many requests, not one each.
   * `alone` (the only request awaiting an answer) writes at once instead, saving the wait for the turn.
   */
  send(message: unknown, alone = false): void {
    if (this.hasExited) return;
    const line = JSON.stringify(message) + '\n';
    if (alone && !this.flushQueued) {
      // Nothing else in flight: no batch to wait for, so the child starts on it at once.
      this.stdin?.write(line);
      return;
    }
    this.outbox += line;
    if (!this.flushQueued) {
      this.flushQueued = true;
      setImmediate(this.flush);
    }
  }

  private readonly flush = (): void => {
    this.flushQueued = false;
    const data = this.outbox;
    this.outbox = '';
    if (!this.hasExited && data) this.stdin?.write(data);
  };

  /** Close stdin, wait; SIGTERM the group, wait; SIGKILL the group. */
  async stop(graceMs: number): Promise<ExitInfo | undefined> {
    if (!this.hasExited) {
      this.flush();
      this.stdin?.end();
      if (!(await settlesWithin(this.exited, graceMs)) && this.pid !== undefined) {
        this.log.debug({ childPid: this.pid }, 'child ignored stdin close; sending SIGTERM');
        killGroup(this.pid, 'SIGTERM');
        if (!(await settlesWithin(this.exited, graceMs))) {
          this.log.warn({ childPid: this.pid }, 'child ignored SIGTERM; sending SIGKILL');
          killGroup(this.pid, 'SIGKILL');
        }
      }
    }
    // SIGKILL cannot be refused; this bound only guards against a process we could not signal at all. Not the
    // grace: the kernel's reaping and Node's hearing of it took over 200 ms on a loaded 2-core machine.
    if (await settlesWithin(this.exited, Math.max(graceMs, EXIT_AFTER_KILL_MS))) return this.exited;
    this.log.error({ childPid: this.pid }, 'child did not exit even after SIGKILL; giving up on it');
    return undefined;
  }
}

/** The child as execa starts it: three pipes, the whole environment given, failures in the result. */
function spawnChild(spec: StdioCommand) {
  return execa(spec.command, spec.args, {
    cwd: spec.cwd,
    env: spec.env, // the whole environment, built by the caller: nothing of the gateway's own leaks in
    extendEnv: false,
    stdin: 'pipe',
    stdout: 'pipe', // MCP messages only, framed above
    stderr: 'pipe', // to the log, framed above
    buffer: false, // streamed, never kept: a child runs as long as the gateway
    reject: false, // a spawn that fails is a result, never a rejection or a throw
    detached: true, // own process group, so shutdown reaches grandchildren too; the exit hook above kills it
    cleanup: false, // the exit hook above does it for the whole group
    windowsHide: true,
  });
}

type Child = ReturnType<typeof spawnChild>;

/** Why a child could not start, in words that name the setting to fix. */
function shortSpawnError(result: Result, spec: StdioCommand): string {
  const code = (result as { code?: string }).code;
  if (code === 'ENOTDIR') return `working folder is not a folder: ${spec.cwd} (check cwd)`;
  if (code === 'ENOENT')
    return existsSync(spec.cwd)
      ? `command not found: ${spec.command} (check command)`
      : `working folder not found: ${spec.cwd} (check cwd)`;
  if (code === 'EACCES') return `command not runnable (permission denied): ${spec.command} (check command)`;
  const message = result.originalMessage || result.shortMessage || 'spawn failed';
  return withoutEnvValues(message.split('\n')[0] ?? message, spec.env);
}

/**
 * Node's refusals of a spawn's arguments quote the value refused ("The property 'options.env['TOKEN']' must
 * be a string without null bytes. Received 'ghp_…'"), and this text goes to the log, the caller's error and
 * the status page: a caller's pasted secret or token must reach none of them. The quote is cut, and any
 * value of the child's environment still in the text (a message quoting it another way) is masked.
 */
function withoutEnvValues(message: string, env: Readonly<Record<string, string>>): string {
  let text = message.replace(/\.?\s*Received\b[\s\S]*$/, ' (the value is not shown)');
  for (const value of Object.values(env)) {
    if (value.length >= MASKED_FROM_LENGTH) text = text.split(value).join('***');
  }
  return text;
}

/** Shorter values (`1`, `true`, `C`) are too common to be secrets and would mask ordinary words. */
const MASKED_FROM_LENGTH = 6;

async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  const settled = await Promise.race([promise.then(() => true), timeout]);
  clearTimeout(timer);
  return settled;
}
