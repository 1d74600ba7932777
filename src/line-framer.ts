/**
 * Splits a byte stream into newline-delimited frames, enforcing the frame
 * ceiling while bytes arrive: a line that grows past `maxBytes` is reported
 * once and its remaining bytes are skipped up to the next newline, so an
 * oversized frame never sits in memory and the stream stays usable.
 * Blank lines are skipped.
 */
export class LineFramer {
  private parts: Buffer[] = [];
  private size = 0;
  private skipping = false;

  constructor(
    private readonly maxBytes: number,
    private readonly onLine: (line: string) => void,
    private readonly onOversized: () => void,
  ) {}

  push(chunk: Buffer): void {
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(10, start);
      const end = nl < 0 ? chunk.length : nl;
      const piece = chunk.subarray(start, end);
      if (!this.skipping) {
        if (this.size + piece.length > this.maxBytes) {
          this.parts = [];
          this.size = 0;
          this.skipping = true;
          this.onOversized();
        } else if (piece.length > 0) {
          this.parts.push(piece);
          this.size += piece.length;
        }
      }
      if (nl < 0) return;
      if (this.skipping) {
        this.skipping = false;
      } else {
        this.emit();
      }
      start = nl + 1;
    }
  }

  private emit(): void {
    const parts = this.parts;
    this.parts = [];
    this.size = 0;
    if (parts.length === 0) return;
    const line =
      parts.length === 1 ? parts[0]!.toString("utf8") : Buffer.concat(parts).toString("utf8");
    if (line.trim() !== "") this.onLine(line);
  }
}
