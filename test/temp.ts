// Temporary folders that are gone when the test file's process ends, however it ends (a failed assertion,
// --test-force-exit), so runs leave nothing behind in the system's temp folder.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const made: string[] = [];
process.once('exit', () => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

/** A new empty folder under `parent` (the system's temp folder unless said), removed when this process exits. */
export function tempDir(prefix: string, parent = tmpdir()): string {
  const dir = mkdtempSync(path.join(parent, prefix));
  made.push(dir);
  return dir;
}
