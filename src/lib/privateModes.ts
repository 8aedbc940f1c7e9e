/*
 * A store holds everything a session saw (docs/security.md, "What the log may contain"), so what
 * reloop creates in it is its owner's alone: directories 0700, files 0600 (before issue 18 they
 * were 0755/0644: any local user could read every session). The umask can only take more away.
 */

/** Store directories (the store, `sessions/`). */
export const PRIVATE_DIR = 0o700;
/** Streams, the catalog, locks, temporary files. */
export const PRIVATE_FILE = 0o600;
