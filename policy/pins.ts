// Tool pinning: the digest of each pinned tool's definition (description, input and output schema,
// annotations) as first approved. A server that later changes a pinned tool has it withheld until the pin
// is updated: a guard against tools that change what they say after review.
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { canonicalJson } from '../infra/canonical-json.js';
import type { Log } from '../infra/log.js';

export type PinVerdict = 'pinned-now' | 'matches' | 'changed';

export class PinStore {
  private readonly pins: Map<string, string>;
  /** Digests of definitions already reported as changed, so each change is logged once. */
  private readonly reported = new Set<string>();
  private saving: Promise<void> = Promise.resolve();

  /** Reads the pins file when given (a missing file is an empty one); throws when it is not valid. */
  constructor(
    readonly file: string | undefined,
    private readonly log: Log,
  ) {
    this.pins = new Map(Object.entries(file ? readPins(file) : {}));
  }

  /** Checks a tool definition (as listed, under the name callers see) against its pin, pinning it on first sight. */
  check(name: string, definition: Record<string, unknown>): PinVerdict {
    const digest = toolDigest(definition);
    const pinned = this.pins.get(name);
    if (pinned === undefined) {
      this.pins.set(name, digest);
      this.log.info({ tool: name, digest }, 'pinned a tool definition on first sight');
      this.save();
      return 'pinned-now';
    }
    if (pinned === digest) return 'matches';
    const report = `${name}\0${digest}`;
    if (!this.reported.has(report)) {
      this.reported.add(report);
      this.log.warn(
        { tool: name, pinned, now: digest, pinsFile: this.file },
        'a pinned tool changed its definition upstream; it is withheld until its pin is updated (remove its entry ' +
          'from the pins file, or set it to the new digest, and reload)',
      );
    }
    return 'changed';
  }

  /** The pin's word on a definition without pinning or logging anything: undefined while the tool is unpinned. */
  peek(name: string, definition: Record<string, unknown>): Exclude<PinVerdict, 'pinned-now'> | undefined {
    const pinned = this.pins.get(name);
    if (pinned === undefined) return undefined;
    return pinned === toolDigest(definition) ? 'matches' : 'changed';
  }

  snapshot(): Record<string, string> {
    return Object.fromEntries(this.pins);
  }

  /** Waits for pending writes of the pins file (tests, shutdown). */
  flushed(): Promise<void> {
    return this.saving;
  }

  private save(): void {
    const file = this.file;
    if (!file) return;
    // Written whole to a temporary file and renamed, so a crash never leaves half a pins file.
    this.saving = this.saving.then(async () => {
      const temporary = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
      try {
        await mkdir(path.dirname(file), { recursive: true });
        await writeFile(temporary, `${JSON.stringify(this.snapshot(), null, 2)}\n`);
        await rename(temporary, file);
      } catch (error) {
        this.log.error(
          { err: error, pinsFile: file },
          'could not write the pins file; pins recorded since start are kept in memory only',
        );
      }
    });
  }
}

/** SHA-256 over the definition's reviewed parts, with object keys sorted so key order does not matter. */
export function toolDigest(definition: Record<string, unknown>): string {
  const reviewed = {
    description: definition.description,
    inputSchema: definition.inputSchema,
    outputSchema: definition.outputSchema,
    annotations: definition.annotations,
  };
  return createHash('sha256').update(canonicalJson(reviewed)).digest('hex');
}

function readPins(file: string): Record<string, string> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new Error(
      `pinsFile ${file} cannot be read (${(error as NodeJS.ErrnoException).code}); fix its permissions or point ` +
        `pinsFile elsewhere`,
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Error(
      `pinsFile ${file} is not JSON; it holds {"<tool name>": "<sha256 hex>"}: fix it or delete it to pin afresh`,
    );
  }
  if (
    parsed === null ||
    typeof parsed !== 'object' ||
    Array.isArray(parsed) ||
    Object.values(parsed).some((v) => typeof v !== 'string' || !/^[0-9a-f]{64}$/.test(v))
  ) {
    throw new Error(`pinsFile ${file} must be a JSON object of {"<tool name>": "<sha256 hex>"}`);
  }
  return parsed as Record<string, string>;
}
