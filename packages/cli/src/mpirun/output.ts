/**
 * Forwards a rank's output line by line, each line prefixed with `[rank] ` so the output of many
 * ranks stays readable; a partial last line is flushed when the rank exits.
 */
export class LineForwarder {
  private partial = '';

  constructor(
    private readonly prefix: string,
    private readonly write: (text: string) => void,
  ) {}

  push(data: Buffer): void {
    if (!this.prefix) {
      this.write(data.toString());
      return;
    }
    const text = this.partial + data.toString();
    const lines = text.split('\n');
    this.partial = lines.pop()!;
    if (lines.length) this.write(lines.map((l) => `${this.prefix}${l}\n`).join(''));
  }

  flush(): void {
    if (this.partial) this.write(`${this.prefix}${this.partial}\n`);
    this.partial = '';
  }
}
