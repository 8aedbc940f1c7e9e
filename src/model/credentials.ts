/**
 * Which credential the Anthropic client would send, from the environment alone. Kept apart from
 * the client so a caller can check for one without loading the SDK.
 */
export function hasApiKey(env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(
    env.ANTHROPIC_API_KEY?.trim() || env.ANTHROPIC_AUTH_TOKEN?.trim() || env.ANTHROPIC_BASE_URL?.trim(),
  );
}

/**
 * The credential to send: the API key, else a bearer token. A server of one's own behind
 * ANTHROPIC_BASE_URL may need neither; it then gets a placeholder (the SDK insists on one),
 * never a key borrowed from anywhere else.
 */
export function credentialFrom(env: NodeJS.ProcessEnv): string | undefined {
  const key = env.ANTHROPIC_API_KEY?.trim() || env.ANTHROPIC_AUTH_TOKEN?.trim();
  if (key) return key;
  return env.ANTHROPIC_BASE_URL?.trim() ? 'no-key-configured' : undefined;
}
