/**
 * A list read from the front, whose head can be let go: item `i` stays at index `i` after the
 * items before it are released. Verify keeps a run's records in one, so a long run is not held
 * whole in memory (src/replay/verify.ts).
 */
export class Window<T> {
  private items: T[] = [];
  private base = 0;

  constructor(
    /** Released items are dropped in blocks of at least this many (each drop copies what is left). */
    private readonly block = 64,
  ) {}

  /** Items pushed so far, released ones included. */
  get length(): number {
    return this.base + this.items.length;
  }

  push(item: T): void {
    this.items.push(item);
  }

  at(index: number): T | undefined {
    this.assertKept(index);
    return this.items[index - this.base];
  }

  /** Items `from` (inclusive) to `to` (exclusive), as a new array. */
  range(from: number, to: number): T[] {
    this.assertKept(from);
    return this.items.slice(from - this.base, to - this.base);
  }

  /** Lets go of the items before `index`: they will not be asked for again. */
  release(index: number): void {
    const n = index - this.base;
    if (n < this.block) return;
    this.items = this.items.slice(n);
    this.base = index;
  }

  private assertKept(index: number): void {
    if (index < this.base) throw new Error(`item ${index} was released (the window starts at ${this.base})`);
  }
}
