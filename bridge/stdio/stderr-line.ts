// The stderr line that says why a child failed. Node prints the error, then its stack, then its own version
// ("Node.js v20.20.2") last; Python ends with the exception line; shells with "command not found". The last
// line is often noise: take the last line that reads like a cause, else the last line that is not noise.

/** Lines that never explain a failure: stack frames, carets, braces, Node's version banner and `throw`. */
const NOISE = new RegExp(
  [
    String.raw`^\s*(at\s|\^+\s*$|[{}[\]]\s*$|Node\.js v\d|throw\s|`,
    String.raw`code:|requireStack:|url:|errno:|syscall:|path:|Traceback|File\s"|\}|\]|\.\.\.)`,
  ].join(''),
);
const CAUSE = new RegExp(
  [
    String.raw`\b(error|cannot|can't|could not|not found|no such|ENOENT|EACCES|EADDRINUSE|`,
    String.raw`denied|refused|failed|invalid|missing|unknown|exception)\b`,
  ].join(''),
  'i',
);

export function meaningfulStderrLine(tail: string): string | undefined {
  const lines = tail
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !NOISE.test(line));
  for (let i = lines.length - 1; i >= 0; i--) if (CAUSE.test(lines[i]!)) return lines[i];
  return lines.at(-1);
}
