/**
 * The runtime's secrets: which environment variables hold them, the environment child processes
 * get without them, and a redactor that keeps their values out of every log record.
 *
 * A secret variable is one named in SECRET_ENV_NAMES, or one whose name has a segment that says
 * it holds a credential (SECRET_ENV_PATTERN: `…_TOKEN`, `…_SECRET`, `…_PASSWORD`, `…_API_KEY`,
 * `…_PRIVATE_KEY`, `…_ACCESS_KEY`, `…_CREDENTIALS`). Bash and hook processes get the environment
 * without them unless a name is passed on purpose (`reloop run --pass-env NAME`). Whatever a child
 * still finds (a file, /proc/<pid>/environ of the runtime itself), the log never holds the live
 * values: records are redacted before they are written. See docs/security.md.
 */

import { withGitGuard } from './gitGuard.ts';

/** The credentials reloop itself uses (the Anthropic client reads them). */
export const SECRET_ENV_NAMES: readonly string[] = [
  'ANTHROPIC_API_KEY',
  'ANTHROPIC_AUTH_TOKEN',
  'CLAUDE_CODE_OAUTH_TOKEN',
];

export const SECRET_ENV_PATTERN =
  /(?:^|_)(?:TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?|API_?KEY|PRIVATE_?KEY|ACCESS_?KEY)(?:_|$)/i;

/** Values shorter than this are not redacted: "1" or "true" would blank out half the log. */
const MIN_SECRET_CHARS = 8;

export function isSecretEnvName(name: string): boolean {
  return SECRET_ENV_NAMES.includes(name) || SECRET_ENV_PATTERN.test(name);
}

/**
 * The environment a child process gets: `env` without its secret variables (except those named in
 * `pass`), and with git told not to use a repository planted in the tree (gitGuard.ts).
 */
export function childEnv(
  env: NodeJS.ProcessEnv = process.env,
  pass: readonly string[] = [],
): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(env)) {
    if (v !== undefined && (!isSecretEnvName(k) || pass.includes(k))) out[k] = v;
  }
  return withGitGuard(out);
}

/** The secret values present in `env`, by variable name. */
export function liveSecrets(env: NodeJS.ProcessEnv = process.env): Map<string, string> {
  const out = new Map<string, string>();
  for (const [k, v] of Object.entries(env)) {
    if (v !== undefined && v.length >= MIN_SECRET_CHARS && isSecretEnvName(k)) out.set(k, v);
  }
  return out;
}

interface Needle {
  text: string;
  mask: string;
}

/** A piece of a secret's value: any longer run of the value that contains it is masked. */
interface Anchor {
  text: string;
  /** Where it sits in `value`. */
  at: number;
  value: string;
  name: string;
}

/**
 * Anchors are cut every ANCHOR_CHARS characters of a value, so every run of the value at least
 * 2 × ANCHOR_CHARS − 1 long contains one: a secret cut by `cut -c1-40`, split where command
 * output was truncated, or streamed in pieces is masked as far as it goes.
 */
const ANCHOR_CHARS = 16;

/**
 * Every encoded form of a secret that is worth looking for whole: URL-encoded, hex (`xxd -p`,
 * `od`-free dumps), and base64 (standard and URL-safe) at each of the three byte alignments it
 * can have inside a longer encoded string — only the characters fully determined by the secret,
 * so `env | base64` is caught too. The value itself is found through its anchors.
 */
function formsOf(name: string, value: string): Needle[] {
  const forms = new Set<string>([encodeURIComponent(value)]);
  const bytes = Buffer.from(value, 'utf8');
  const hex = bytes.toString('hex');
  forms.add(hex);
  forms.add(hex.toUpperCase());
  for (let k = 0; k < 3; k++) {
    const b64 = Buffer.concat([Buffer.alloc(k), bytes]).toString('base64');
    const from = Math.ceil((8 * k) / 6);
    const to = Math.floor((8 * (k + bytes.length)) / 6); // exclusive
    const inner = b64.slice(from, to);
    if (inner.length >= MIN_SECRET_CHARS) {
      forms.add(inner);
      forms.add(inner.replace(/\+/g, '-').replace(/\//g, '_'));
    }
  }
  forms.delete(value); // found by its anchors, with its pieces
  return [...forms].map((text) => ({ text, mask: maskFor(name, text.length) }));
}

function anchorsOf(name: string, value: string): Anchor[] {
  // A value too short to cut is its own anchor: only found whole.
  if (value.length < 2 * ANCHOR_CHARS) return [{ text: value, at: 0, value, name }];
  const out: Anchor[] = [];
  for (let at = 0; at + ANCHOR_CHARS <= value.length; at += ANCHOR_CHARS) {
    out.push({ text: value.slice(at, at + ANCHOR_CHARS), at, value, name });
  }
  return out;
}

/**
 * Same length as what it hides: token estimates (and so compaction decisions) come out the same
 * whether a run is live or replayed from its redacted log.
 */
function maskFor(name: string, length: number): string {
  const label = `[REDACTED:${name}]`;
  return label.length <= length ? label + '*'.repeat(length - label.length) : '*'.repeat(length);
}

const LINE_BREAK = /\r?\n/g;

/** Replaces live secret values in any JSON-like value; returns the same object when none occurs. */
export class Redactor {
  private readonly needles: Needle[];
  private readonly anchors: Anchor[];

  constructor(secrets: ReadonlyMap<string, string>) {
    // Longest first, so a base64 inner form never shadows the value it came from.
    this.needles = [...secrets]
      .flatMap(([n, v]) => formsOf(n, v))
      .sort((a, b) => b.text.length - a.text.length);
    this.anchors = [...secrets].flatMap(([n, v]) => anchorsOf(n, v));
  }

  get active(): boolean {
    return this.anchors.length > 0;
  }

  redactString(s: string): string {
    if (this.anchors.length === 0) return s;
    // Encoders and dumps wrap their output (`base64` at 76 columns, `xxd -p` at 60, `fold`): look
    // with the line breaks taken out, and put them back where they were. What is found within
    // one line is found the same way in the joined text.
    return s.includes('\n') ? this.acrossLines(s) : this.redactLine(s);
  }

  private redactLine(s: string): string {
    let out = s;
    for (const n of this.needles) if (out.includes(n.text)) out = out.split(n.text).join(n.mask);
    for (const a of this.anchors) if (out.includes(a.text)) out = maskRuns(out, a);
    return out;
  }

  private acrossLines(s: string): string {
    const joined = s.replace(LINE_BREAK, '');
    const redacted = this.redactLine(joined);
    if (redacted === joined) return s;
    let out = '';
    let j = 0;
    for (let i = 0; i < s.length; i++) {
      const c = s[i] as string;
      if (c === '\n' || (c === '\r' && s[i + 1] === '\n')) out += c;
      else out += redacted[j++];
    }
    return out;
  }

  redact<T>(value: T): T {
    if (this.anchors.length === 0) return value;
    return this.walk(value) as T;
  }

  /**
   * Copy-on-write over any JSON-like value, with an explicit stack: a model controls how deep tool
   * inputs nest, and a recursive walk overflowed at ~3 800 levels (issue 18). Only the containers
   * on the path to a changed string are copied; everything else is returned as it was.
   */
  private walk(root: unknown): unknown {
    if (typeof root === 'string') return this.redactString(root);
    if (root === null || typeof root !== 'object') return root;
    const stack: Frame[] = [frameOf(root)];
    for (;;) {
      const f = stack[stack.length - 1]!;
      if (f.i < f.keys.length) {
        const key = f.keys[f.i]!;
        const child = (f.src as Record<string, unknown>)[key];
        if (typeof child === 'string') {
          const r = this.redactString(child);
          if (r !== child) setIn(f, key, r);
          f.i++;
        } else if (child !== null && typeof child === 'object') {
          stack.push(frameOf(child)); // its parent's index moves on when it is done
        } else {
          f.i++;
        }
        continue;
      }
      stack.pop();
      const out = f.copy ?? f.src;
      const parent = stack[stack.length - 1];
      if (!parent) return out;
      if (out !== f.src) setIn(parent, parent.keys[parent.i]!, out);
      parent.i++;
    }
  }
}

/** One container being walked: its keys (indices for an array), where the walk is, its copy once changed. */
interface Frame {
  src: object;
  keys: string[];
  i: number;
  copy: Record<string, unknown> | unknown[] | undefined;
}

function frameOf(src: object): Frame {
  return { src, keys: Object.keys(src), i: 0, copy: undefined };
}

function setIn(f: Frame, key: string, value: unknown): void {
  f.copy ??= Array.isArray(f.src) ? f.src.slice() : { ...(f.src as Record<string, unknown>) };
  (f.copy as Record<string, unknown>)[key] = value;
}

/** Masks every run of `a.value` around each occurrence of the anchor, as far as it matches. */
function maskRuns(s: string, a: Anchor): string {
  let out = '';
  let from = 0;
  let hit = s.indexOf(a.text, from);
  while (hit >= 0) {
    let start = hit;
    let k = a.at;
    while (start > from && k > 0 && s[start - 1] === a.value[k - 1]) {
      start--;
      k--;
    }
    let end = hit + a.text.length;
    let m = a.at + a.text.length;
    while (end < s.length && m < a.value.length && s[end] === a.value[m]) {
      end++;
      m++;
    }
    out += s.slice(from, start) + maskFor(a.name, end - start);
    from = end;
    hit = s.indexOf(a.text, from);
  }
  return out + s.slice(from);
}

let cached: Redactor | undefined;

/** The redactor for this process's own secrets, built once from its environment. */
export function defaultRedactor(): Redactor {
  cached ??= new Redactor(liveSecrets(process.env));
  return cached;
}
