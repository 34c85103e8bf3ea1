// The gateway as users run it: compiled by tsc (npm start and the container run dist/, not tsx). Under
// tsx every closure carries esbuild's __name wrapper and the CPU per call is about 1.8× higher, so every
// bench part runs this build. It lives in bench/.build (git-ignored) and is removed when the bench ends.
import { spawnSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const OUT = path.join(ROOT, 'bench/.build');
let built: string | undefined;

/** The compiled cli.js, building it on first use; throws with tsc's words when it does not compile. */
export function gatewayEntry(): string {
  if (built) return built;
  rmSync(OUT, { recursive: true, force: true });
  const tsc = path.join(ROOT, 'node_modules/.bin/tsc');
  const r = spawnSync(tsc, ['-p', 'tsconfig.build.json', '--outDir', OUT], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 180_000,
  });
  const entry = path.join(OUT, 'src/cli.js');
  if (r.status !== 0 || !existsSync(entry))
    throw new Error(
      `the bench needs the gateway compiled; tsc failed (${r.status ?? r.signal}): ` +
        `${(r.stdout + r.stderr).slice(0, 800)}`,
    );
  return (built = entry);
}

export function removeBuild(): void {
  rmSync(OUT, { recursive: true, force: true });
  built = undefined;
}
