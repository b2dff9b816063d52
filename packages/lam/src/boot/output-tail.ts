/**
 * The last `lines` non-empty lines of a launcher's output, on one line: what a boot error quotes
 * from ssh, pbsdsh or srun so that the user sees the cause.
 */
export function outputTail(text: string, lines = 4): string {
  return (
    text
      .trim()
      .split('\n')
      .filter((l) => l.trim() !== '')
      .slice(-lines)
      .join(' / ') || '(no output)'
  );
}
