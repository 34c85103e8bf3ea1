// Asking after a process the test did not start itself (a gateway's child, its grandchild) by its pid.
import { readdirSync, readFileSync } from 'node:fs';

/** Whether a process with this pid is still there (signal 0 only asks; nothing is sent). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * This process's children (a gateway started in-process spawns them) whose environment holds `variable`, by
 * pid, with its value: what a per-caller child was really given, read from /proc. A child that exits while
 * being read is left out.
 */
export function childrenHoldingVariable(variable: string): Map<number, string> {
  const found = new Map<number, string>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) !== process.pid) continue;
      const assignment = readFileSync(`/proc/${entry}/environ`, 'utf8')
        .split('\0')
        .find((line) => line.startsWith(`${variable}=`));
      if (assignment) found.set(Number(entry), assignment.slice(variable.length + 1));
    } catch {}
  }
  return found;
}

/** This process's children whose command line holds `fragment`, by pid (a gateway started in-process spawns them). */
export function childrenRunning(fragment: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      // A zombie (state Z) has exited; only its parent's reaping is left.
      if (Number(fields[1]) !== process.pid || fields[0] === 'Z') continue;
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(fragment)) found.push(Number(entry));
    } catch {}
  }
  return found;
}
