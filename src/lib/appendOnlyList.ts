/**
 * An immutable list with O(1) amortised append, so assigns can "copy" the history every turn
 * without copying it. A view is (shared array, length): appending to the newest view pushes
 * onto the shared array; appending to an older view (a fork of history) copies its prefix
 * first, so no view ever sees another's later items.
 */
export class AppendOnlyList<T> {
  private constructor(
    private readonly items: T[],
    readonly length: number,
  ) {}

  static empty<T>(): AppendOnlyList<T> {
    return new AppendOnlyList<T>([], 0);
  }

  /** Takes ownership of `items`: callers must not mutate the array afterwards. */
  static from<T>(items: readonly T[]): AppendOnlyList<T> {
    return new AppendOnlyList<T>(items.slice(), items.length);
  }

  append(...values: T[]): AppendOnlyList<T> {
    if (values.length === 0) return this;
    const base = this.items.length === this.length ? this.items : this.items.slice(0, this.length);
    for (const v of values) base.push(v);
    return new AppendOnlyList(base, this.length + values.length);
  }

  at(index: number): T | undefined {
    if (index < 0) index += this.length;
    return index >= 0 && index < this.length ? this.items[index] : undefined;
  }

  last(): T | undefined {
    return this.length > 0 ? this.items[this.length - 1] : undefined;
  }

  /**
   * The items as a read-only array. Free for the newest view (the shared array itself);
   * an older view pays one copy.
   */
  view(): readonly T[] {
    return this.items.length === this.length ? this.items : this.items.slice(0, this.length);
  }

  toArray(): T[] {
    return this.items.slice(0, this.length);
  }
}
