// bwrap takes its seccomp program and writes its status through file descriptors, and the gateway's spawn
// gives a child only stdin, stdout and stderr. A fixed `sh -c` script opens the files on the descriptors
// bwrap is told about and then execs bwrap: no process stays behind. The paths are the gateway's own files
// and reach the script as positional parameters, so the shell never parses one.

/** A descriptor to open before bwrap starts: read (`<`) a file, or write (`>`) a file or FIFO. */
export type Descriptor = [fd: number, direction: '<' | '>', file: string];

/** The argv that opens `descriptors` and then runs the argv that follows it in their place. */
export function openingDescriptors(descriptors: readonly Descriptor[]): string[] {
  if (!descriptors.length) return [];
  const redirects = descriptors.map(([fd, direction], index) => `${fd}${direction}"$${index + 1}"`).join(' ');
  const script = `exec ${redirects} && shift ${descriptors.length} && exec "$@"`;
  return ['/bin/sh', '-c', script, 'mcp-sandbox', ...descriptors.map(([, , file]) => file)];
}
