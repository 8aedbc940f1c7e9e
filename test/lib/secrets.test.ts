import { describe, expect, it } from 'vitest';
import { withGitGuard } from '../../src/lib/gitGuard.ts';
import { childEnv, isSecretEnvName, liveSecrets, Redactor } from '../../src/lib/secrets.ts';

const KEY = 'sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789';

describe('which variables are secrets', () => {
  it.each([
    'ANTHROPIC_API_KEY',
    'ANTHROPIC_AUTH_TOKEN',
    'CLAUDE_CODE_OAUTH_TOKEN',
    'GITHUB_TOKEN',
    'NPM_TOKEN',
    'AWS_SECRET_ACCESS_KEY',
    'DB_PASSWORD',
    'OPENAI_API_KEY',
    'GOOGLE_APPLICATION_CREDENTIALS',
    'SSH_PRIVATE_KEY',
  ])('%s is', (name) => expect(isSecretEnvName(name)).toBe(true));

  it.each([
    'PATH',
    'HOME',
    'ANTHROPIC_BASE_URL',
    'TOKENIZERS_PARALLELISM',
    'KEYBOARD',
    'LANG',
  ])('%s is not', (name) => expect(isSecretEnvName(name)).toBe(false));

  it('childEnv drops them unless passed on purpose', () => {
    const env = { PATH: '/bin', ANTHROPIC_API_KEY: KEY, GITHUB_TOKEN: 'ghp_0123456789' };
    expect(childEnv(env)).toEqual(withGitGuard({ PATH: '/bin' }));
    expect(childEnv(env, ['GITHUB_TOKEN'])).toEqual(
      withGitGuard({ PATH: '/bin', GITHUB_TOKEN: 'ghp_0123456789' }),
    );
  });

  it('liveSecrets skips values too short to redact safely', () => {
    expect([...liveSecrets({ ANTHROPIC_API_KEY: KEY, X_TOKEN: 'true', PATH: '/bin' }).keys()]).toEqual([
      'ANTHROPIC_API_KEY',
    ]);
  });
});

describe('Redactor', () => {
  const r = new Redactor(new Map([['ANTHROPIC_API_KEY', KEY]]));

  it('returns the very same object when no secret occurs (no copy on the hot path)', () => {
    const data = { a: ['x', { b: 'y' }], n: 1 };
    expect(r.redact(data)).toBe(data);
    expect(new Redactor(new Map()).redact(data)).toBe(data);
  });

  it('masks the value wherever it is, with a mask of the same length, leaving the input alone', () => {
    const data = { result: { content: [{ type: 'text', text: `key=${KEY}\n` }] }, other: 'fine' };
    const out = r.redact(data);
    expect(out).not.toBe(data);
    expect(data.result.content[0]!.text).toContain(KEY);
    const text = out.result.content[0]!.text;
    expect(text).toBe(`key=[REDACTED:ANTHROPIC_API_KEY]${'*'.repeat(KEY.length - 28)}\n`);
    expect(text.length).toBe(data.result.content[0]!.text.length);
    expect(out.other).toBe('fine');
  });

  it('catches URL-encoded and base64 forms at any alignment', () => {
    const weird = 'tok/with+special=chars&more';
    const rw = new Redactor(new Map([['ANTHROPIC_AUTH_TOKEN', weird]]));
    expect(rw.redactString(`x ${encodeURIComponent(weird)} y`)).not.toContain(encodeURIComponent(weird));
    for (const prefix of ['', 'A', 'AB', 'ABC=']) {
      const b64 = Buffer.from(`${prefix}${weird}\n`).toString('base64');
      const b64url = Buffer.from(`${prefix}${weird}\n`).toString('base64url');
      for (const encoded of [b64, b64url]) {
        const out = rw.redactString(encoded);
        expect(out, prefix).toContain('REDACTED');
        // What is left of the encoding no longer decodes to the secret.
        expect(Buffer.from(out, 'base64').toString('latin1')).not.toContain(weird);
      }
    }
  });

  // A key-shaped value long enough to be cut into anchors (16 characters each).
  const LONG = `sk-ant-api03-${'Xy7Qp2Lm9Rt4'.repeat(8)}-Zz`;
  const rl = new Redactor(new Map([['ANTHROPIC_API_KEY', LONG]]));
  const masked = (s: string) => !s.includes(LONG.slice(20, 51));

  it('catches hex, lower and upper case', () => {
    const hex = Buffer.from(`KEY=${LONG}\n`).toString('hex');
    for (const form of [hex, hex.toUpperCase()]) {
      const out = rl.redactString(form);
      expect(out).toContain('REDACTED');
      expect(out).not.toContain(Buffer.from(LONG).toString('hex').slice(0, 40));
      expect(out.length).toBe(form.length);
    }
  });

  it('catches a form wrapped over lines (base64 at 76, xxd -p at 60, fold), keeping the line breaks', () => {
    const b64 = Buffer.from(`ANTHROPIC_API_KEY=${LONG}\n`).toString('base64');
    const wrapped = b64.replace(/(.{76})/g, '$1\n');
    const hex = Buffer.from(LONG)
      .toString('hex')
      .replace(/(.{60})/g, '$1\r\n');
    const folded = LONG.replace(/(.{30})/g, '$1\n');
    for (const text of [wrapped, hex, folded]) {
      const out = rl.redactString(`before\n${text}\nafter`);
      expect(out.replace(/\r?\n/g, '')).toContain('REDACTED');
      // Every line break stays where it was; only characters of the secret are masked.
      expect(out.length).toBe(text.length + 'before\n\nafter'.length);
      expect(out.split('\n').length).toBe(`before\n${text}\nafter`.split('\n').length);
      expect(out.startsWith('before\n') && out.endsWith('\nafter')).toBe(true);
      expect(out.replace(/\r?\n/g, '')).not.toContain(LONG.slice(30, 61));
    }
    expect(
      Buffer.from(rl.redactString(wrapped).replace(/\n/g, ''), 'base64').toString('latin1'),
    ).not.toContain(LONG.slice(20, 40));
  });

  it('masks any run of 31 or more characters of the value (cut, a truncated output, a streamed piece)', () => {
    for (const [from, to] of [
      [0, 31],
      [17, 60],
      [LONG.length - 40, LONG.length],
    ] as const) {
      const piece = LONG.slice(from, to);
      const out = rl.redactString(`x${piece}y`);
      expect(out.startsWith('x') && out.endsWith('y'), `${from}-${to}`).toBe(true);
      expect(masked(out) && !out.includes(piece), `${from}-${to}`).toBe(true);
      expect(out.length).toBe(piece.length + 2);
    }
    // The run is masked as far as it goes, and nothing beside it.
    expect(rl.redactString(`ab${LONG.slice(5, 70)}cd`)).toMatch(/^ab\[REDACTED:ANTHROPIC_API_KEY\]\**cd$/);
  });

  it('a value shorter than two anchors is only found whole', () => {
    const short = new Redactor(new Map([['X_TOKEN', 'abcdefgh12345678']]));
    expect(short.redactString('<abcdefgh12345678>')).toBe('<****************>');
    expect(short.redactString('<abcdefgh1234567>')).toBe('<abcdefgh1234567>');
  });
});
