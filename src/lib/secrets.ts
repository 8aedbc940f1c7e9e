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

/** `env` without its secret variables, except those named in `pass`. */
export function childEnv(
  env: NodeJS.ProcessEnv = process.env,
  pass: readonly string[] = [],
): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(env)) {
    if (v !== undefined && (!isSecretEnvName(k) || pass.includes(k))) out[k] = v;
  }
  return out;
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

/**
 * Every form of a secret that is worth looking for: the value, URL-encoded, and base64 (standard
 * and URL-safe) at each of the three byte alignments it can have inside a longer encoded string —
 * only the characters fully determined by the secret, so `env | base64` is caught too.
 */
function formsOf(name: string, value: string): Needle[] {
  const forms = new Set<string>([value, encodeURIComponent(value)]);
  const bytes = Buffer.from(value, 'utf8');
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
  return [...forms].map((text) => ({ text, mask: maskFor(name, text.length) }));
}

/**
 * Same length as what it hides: token estimates (and so compaction decisions) come out the same
 * whether a run is live or replayed from its redacted log.
 */
function maskFor(name: string, length: number): string {
  const label = `[REDACTED:${name}]`;
  return label.length <= length ? label + '*'.repeat(length - label.length) : '*'.repeat(length);
}

/** Replaces live secret values in any JSON-like value; returns the same object when none occurs. */
export class Redactor {
  private readonly needles: Needle[];

  constructor(secrets: ReadonlyMap<string, string>) {
    // Longest first, so a base64 inner form never shadows the value it came from.
    this.needles = [...secrets]
      .flatMap(([n, v]) => formsOf(n, v))
      .sort((a, b) => b.text.length - a.text.length);
  }

  get active(): boolean {
    return this.needles.length > 0;
  }

  redactString(s: string): string {
    let out = s;
    for (const n of this.needles) if (out.includes(n.text)) out = out.split(n.text).join(n.mask);
    return out;
  }

  redact<T>(value: T): T {
    if (this.needles.length === 0) return value;
    return this.walk(value) as T;
  }

  private walk(v: unknown): unknown {
    if (typeof v === 'string') return this.redactString(v);
    if (Array.isArray(v)) {
      let copy: unknown[] | undefined;
      for (let i = 0; i < v.length; i++) {
        const r = this.walk(v[i]);
        if (r !== v[i]) {
          copy ??= v.slice();
          copy[i] = r;
        }
      }
      return copy ?? v;
    }
    if (v !== null && typeof v === 'object') {
      let copy: Record<string, unknown> | undefined;
      for (const [k, x] of Object.entries(v)) {
        const r = this.walk(x);
        if (r !== x) {
          copy ??= { ...(v as Record<string, unknown>) };
          copy[k] = r;
        }
      }
      return copy ?? v;
    }
    return v;
  }
}

let cached: Redactor | undefined;

/** The redactor for this process's own secrets, built once from its environment. */
export function defaultRedactor(): Redactor {
  cached ??= new Redactor(liveSecrets(process.env));
  return cached;
}
