// credentials.store: file — one JSON file of sealed records, read once at start and rewritten whole (to a
// temporary file, then renamed over it, mode 0600) on every change, so a crash mid-write leaves the old
// file. For one gateway: replicas need store: redis. Pending connect links are kept in memory only (they
// live minutes; a restart makes people click again).
import { randomBytes } from 'node:crypto';
import { readFile, rename, writeFile } from 'node:fs/promises';
import type { CredentialBackend } from './backend.js';

interface FileShape {
  version: 1;
  /** principal index → server → sealed record */
  records: Record<string, Record<string, string>>;
}

export class FileBackend implements CredentialBackend {
  private records = new Map<string, Map<string, string>>();
  private readonly pending = new Map<string, { sealed: string; expiresAt: number }>();
  /** Writes in order, one at a time. */
  private writing: Promise<void> = Promise.resolve();

  private constructor(private readonly file: string) {}

  /** Opens the file (a missing one is an empty store); a file that is not a credential store is an error naming it. */
  static async open(file: string): Promise<FileBackend> {
    const backend = new FileBackend(file);
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return backend;
      throw new Error(
        `credentials.file ${file} cannot be read (${(error as Error).message}); fix its permissions or point ` +
          `credentials.file elsewhere`,
      );
    }
    let shape: FileShape;
    try {
      shape = JSON.parse(text) as FileShape;
      if (shape?.version !== 1 || typeof shape.records !== 'object' || shape.records === null)
        throw new Error('not a credential store');
    } catch {
      throw new Error(
        `credentials.file ${file} is not a credential store written by mcp-gateway; move it away or point ` +
          `credentials.file elsewhere`,
      );
    }
    for (const [principal, servers] of Object.entries(shape.records))
      backend.records.set(principal, new Map(Object.entries(servers)));
    return backend;
  }

  async read(principal: string, server: string): Promise<string | undefined> {
    return this.records.get(principal)?.get(server);
  }

  async write(principal: string, server: string, sealed: string): Promise<void> {
    let servers = this.records.get(principal);
    if (!servers) this.records.set(principal, (servers = new Map()));
    servers.set(server, sealed);
    await this.save();
  }

  async remove(principal: string, server: string): Promise<boolean> {
    const servers = this.records.get(principal);
    if (!servers?.delete(server)) return false;
    if (servers.size === 0) this.records.delete(principal);
    await this.save();
    return true;
  }

  async readAll(principal: string): Promise<Map<string, string>> {
    return new Map(this.records.get(principal) ?? []);
  }

  async counts(): Promise<Map<string, number>> {
    const counts = new Map<string, number>();
    for (const servers of this.records.values())
      for (const server of servers.keys()) counts.set(server, (counts.get(server) ?? 0) + 1);
    return counts;
  }

  async putPending(id: string, sealed: string, expiresAt: number): Promise<void> {
    const now = Date.now();
    for (const [other, entry] of this.pending) if (entry.expiresAt <= now) this.pending.delete(other);
    this.pending.set(id, { sealed, expiresAt });
  }

  async peekPending(id: string): Promise<string | undefined> {
    const entry = this.pending.get(id);
    return entry && entry.expiresAt > Date.now() ? entry.sealed : undefined;
  }

  async takePending(id: string): Promise<string | undefined> {
    const entry = this.pending.get(id);
    this.pending.delete(id);
    return entry && entry.expiresAt > Date.now() ? entry.sealed : undefined;
  }

  async close(): Promise<void> {
    await this.writing;
  }

  private save(): Promise<void> {
    const shape: FileShape = { version: 1, records: {} };
    for (const [principal, servers] of this.records) shape.records[principal] = Object.fromEntries(servers);
    const text = `${JSON.stringify(shape, null, 2)}\n`;
    const next = this.writing.then(async () => {
      const temporary = `${this.file}.${randomBytes(6).toString('hex')}.tmp`;
      await writeFile(temporary, text, { mode: 0o600 });
      await rename(temporary, this.file);
    });
    this.writing = next.catch(() => {});
    return next;
  }
}
