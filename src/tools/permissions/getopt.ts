/**
 * Command-line options read as GNU getopt_long reads them (glibc's and gnulib's getopt, which
 * sed, sort, gawk and most GNU tools use), so that a table of a program's options says exactly
 * which words are options, which are their values and which are operands.
 *
 * What getopt does, and this reader with it:
 * - a short cluster `-nl5` is `-n`, then `-l` with the value `5`; a letter that takes a value
 *   takes the rest of its word, or the next word whatever it is (`-F -S`: `-S` is a value,
 *   `-T --`: `--` is a value); an optional value is only ever the rest of the word (`-i.bak`);
 * - `--name=value`, `--name value` (required values only), and any unambiguous prefix of a name
 *   (`--o=x` is `--output=x` for sort); an exact name wins over longer names it is a prefix of;
 *   a prefix of several options that differ is ambiguous and the program refuses it;
 * - `--` ends the options, `-` is an operand; with `permute` (GNU's default) options may follow
 *   operands, without it (optstring `+…`, gawk) the first operand ends them.
 *
 * Anything the table does not know — an unknown letter or name, an ambiguous prefix, a value
 * where none is allowed, a missing value — is an error: a caller fails closed on it (the real
 * program would refuse it too, or it knows an option reloop does not).
 */

export type ArgKind = 'none' | 'required' | 'optional';

export interface LongOption {
  arg: ArgKind;
  /** Options with the same id are one option spelled two ways (sed's `--quiet`, `--silent`, `-n`). */
  id: string;
}

export interface OptionTable {
  /** Letter → whether it takes a value; the option's id is `-<letter>`. */
  short: Readonly<Record<string, ArgKind>>;
  /** Name (without `--`) → its option. */
  long: Readonly<Record<string, LongOption>>;
  /** GNU permutation: options may follow operands (false: the first operand ends them). */
  permute: boolean;
}

export interface ReadOption {
  id: string;
  /** The word it was read from (for messages). */
  word: string;
  /** Index of that word. */
  at: number;
  value?: string;
  /** Index of the word the value was read from (`at` when it was attached). */
  valueAt?: number;
}

export interface ReadArgs {
  options: ReadOption[];
  operands: { value: string; at: number }[];
  /** Index of the first word that can only be an operand (after `--`, or after the first operand without permutation); words.length if none. */
  operandsFrom: number;
}

export type GetoptResult = ReadArgs | { error: string };

/** A long option's name as getopt_long resolves it: exact, else the one option it is a prefix of. */
export function resolveLong(
  table: OptionTable,
  name: string,
): { name: string; option: LongOption } | 'ambiguous' | 'unknown' {
  const exact = table.long[name];
  if (exact) return { name, option: exact };
  let found: { name: string; option: LongOption } | undefined;
  for (const [n, option] of Object.entries(table.long)) {
    if (!n.startsWith(name)) continue;
    if (!found) found = { name: n, option };
    // glibc: candidates that are the same option (same argument and result) are not ambiguous.
    else if (found.option.id !== option.id || found.option.arg !== option.arg) return 'ambiguous';
  }
  return found ?? 'unknown';
}

/** Reads `words` from index `from` (1: after the program name) against `table`. */
export function readArgs(words: readonly string[], table: OptionTable, from = 1): GetoptResult {
  const options: ReadOption[] = [];
  const operands: { value: string; at: number }[] = [];
  for (let i = from; i < words.length; i++) {
    const w = words[i] as string;
    if (w === '--') {
      for (let k = i + 1; k < words.length; k++) operands.push({ value: words[k] as string, at: k });
      return { options, operands, operandsFrom: i + 1 };
    }
    if (!w.startsWith('-') || w === '-') {
      if (!table.permute) {
        for (let k = i; k < words.length; k++) operands.push({ value: words[k] as string, at: k });
        return { options, operands, operandsFrom: i };
      }
      operands.push({ value: w, at: i });
      continue;
    }
    if (w.startsWith('--')) {
      const eq = w.indexOf('=');
      const name = eq < 0 ? w.slice(2) : w.slice(2, eq);
      const r = resolveLong(table, name);
      if (r === 'ambiguous') return { error: `${w}: an abbreviation of more than one option` };
      if (r === 'unknown') return { error: `${w}: an option reloop does not know` };
      const { arg, id } = r.option;
      if (eq >= 0) {
        if (arg === 'none') return { error: `${w}: --${r.name} takes no value` };
        options.push({ id, word: w, at: i, value: w.slice(eq + 1), valueAt: i });
      } else if (arg === 'required') {
        if (i + 1 >= words.length) return { error: `${w}: --${r.name} needs a value` };
        options.push({ id, word: w, at: i, value: words[i + 1] as string, valueAt: i + 1 });
        i++;
      } else options.push({ id, word: w, at: i });
      continue;
    }
    for (let k = 1; k < w.length; k++) {
      const letter = w[k] as string;
      const arg = Object.hasOwn(table.short, letter) ? table.short[letter] : undefined;
      if (arg === undefined) return { error: `${w}: -${letter} is an option reloop does not know` };
      const id = `-${letter}`;
      if (arg === 'none') {
        options.push({ id, word: w, at: i });
        continue;
      }
      const rest = w.slice(k + 1);
      if (rest !== '') options.push({ id, word: w, at: i, value: rest, valueAt: i });
      else if (arg === 'optional') options.push({ id, word: w, at: i });
      else {
        if (i + 1 >= words.length) return { error: `${w}: -${letter} needs a value` };
        options.push({ id, word: w, at: i, value: words[i + 1] as string, valueAt: i + 1 });
        i++;
      }
      break;
    }
  }
  return { options, operands, operandsFrom: words.length };
}

/** Builds a long-option table from `name: [arg, id]` pairs; `id` defaults to `--name`. */
export function longTable(
  entries: Record<string, ArgKind | readonly [ArgKind, string]>,
): Record<string, LongOption> {
  const out: Record<string, LongOption> = {};
  for (const [name, spec] of Object.entries(entries)) {
    out[name] = typeof spec === 'string' ? { arg: spec, id: `--${name}` } : { arg: spec[0], id: spec[1] };
  }
  return out;
}

/** Builds a short-option table from strings of letters by kind. */
export function shortTable(none: string, required = '', optional = ''): Record<string, ArgKind> {
  const out: Record<string, ArgKind> = {};
  for (const c of none) out[c] = 'none';
  for (const c of required) out[c] = 'required';
  for (const c of optional) out[c] = 'optional';
  return out;
}
