/**
 * Keeps the head and the tail of a stream of text under a character cap. Commands fail at the end
 * (the error, the summary line) as often as at the start, so both ends are worth more than the middle.
 */
export class HeadTailBuffer {
  private head = '';
  private tail = '';
  private total = 0;
  private readonly headCap: number;
  private readonly tailCap: number;

  constructor(readonly maxChars: number) {
    this.headCap = Math.ceil(maxChars / 2);
    this.tailCap = maxChars - this.headCap;
  }

  push(chunk: string): void {
    this.total += chunk.length;
    if (this.head.length < this.headCap) {
      const room = this.headCap - this.head.length;
      this.head += chunk.slice(0, room);
      chunk = chunk.slice(room);
    }
    if (!chunk) return;
    this.tail += chunk;
    // Trim lazily (at twice the cap) so a stream of small chunks does not re-copy the tail each time.
    if (this.tail.length > 2 * this.tailCap) this.tail = this.tail.slice(-this.tailCap);
  }

  get totalChars(): number {
    return this.total;
  }

  get droppedChars(): number {
    return Math.max(0, this.total - this.maxChars);
  }

  /** The kept text; when something was dropped, a `[… N characters truncated …]` line marks where. */
  toString(): string {
    const dropped = this.droppedChars;
    if (dropped === 0) return this.head + this.tail;
    const tail = this.tailCap > 0 ? this.tail.slice(-this.tailCap) : '';
    return `${this.head}\n[… ${dropped} characters truncated …]\n${tail}`;
  }
}
