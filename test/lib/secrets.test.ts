import { describe, expect, it } from 'vitest';
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
    expect(childEnv(env)).toEqual({ PATH: '/bin' });
    expect(childEnv(env, ['GITHUB_TOKEN'])).toEqual({ PATH: '/bin', GITHUB_TOKEN: 'ghp_0123456789' });
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
});
