// Asking after a process the test did not start itself (a gateway's child, its grandchild) by its pid.

/** Whether a process with this pid is still there (signal 0 only asks; nothing is sent). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
