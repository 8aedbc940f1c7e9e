/** Errors users of the store handle: each has a stable `code` and the context to act on. */
export class ConcurrencyError extends Error {
  readonly code = 'CONCURRENCY';
  constructor(
    readonly session: string,
    readonly expectedSeq: number,
    readonly actualSeq: number,
  ) {
    super(`session ${session}: expected last seq ${expectedSeq}, but the log is at ${actualSeq}`);
    this.name = 'ConcurrencyError';
  }
}

export class InvalidRecordError extends Error {
  readonly code = 'INVALID_RECORD';
  constructor(
    readonly where: { session?: string; seq?: number; line?: number; file?: string },
    readonly detail: string,
  ) {
    const at = [
      where.file ? `${where.file}` : where.session ? `session ${where.session}` : '',
      where.line !== undefined ? `line ${where.line}` : '',
      where.seq !== undefined ? `seq ${where.seq}` : '',
    ]
      .filter(Boolean)
      .join(', ');
    super(`invalid record (${at}): ${detail}`);
    this.name = 'InvalidRecordError';
  }
}

export class SchemaVersionError extends Error {
  readonly code = 'SCHEMA_VERSION';
  constructor(
    readonly where: { session?: string; seq?: number; line?: number; file?: string },
    readonly version: unknown,
    readonly supported: readonly number[],
  ) {
    super(
      `unsupported schema version ${JSON.stringify(version)} at ${where.file ?? where.session ?? '?'}${
        where.line !== undefined ? ` line ${where.line}` : ''
      } (supported: ${supported.join(', ')})`,
    );
    this.name = 'SchemaVersionError';
  }
}

export class SessionNotFoundError extends Error {
  readonly code = 'SESSION_NOT_FOUND';
  constructor(readonly session: string) {
    super(`no session with id ${JSON.stringify(session)}`);
    this.name = 'SessionNotFoundError';
  }
}

/**
 * Another process holds the session's writer lock. A holder that died is detected and taken over
 * without this error; what is left is a live holder, a holder on another host (which cannot be
 * checked from here), or a lock file nobody can read — the message says which file to remove if the
 * holder is known to be gone.
 */
export class SessionLockedError extends Error {
  readonly code = 'SESSION_LOCKED';
  constructor(
    readonly session: string,
    readonly holder: string,
    readonly lockPath?: string,
    readonly foreignHost = false,
  ) {
    const why = foreignHost ? ', on another host: whether it still runs cannot be checked from here' : '';
    const hint = lockPath
      ? `; if no reloop process is writing this session any more, remove ${lockPath} and try again`
      : '';
    super(`session ${session} is being written by another process (${holder}${why})${hint}`);
    this.name = 'SessionLockedError';
  }
}

/**
 * A v2 record refers to content the log does not hold where it says (a tampered or corrupt log):
 * the fold cannot rebuild the message or history it stands for.
 */
export class LogReferenceError extends Error {
  readonly code = 'LOG_REFERENCE';
  constructor(
    readonly session: string,
    readonly seq: number,
    readonly detail: string,
  ) {
    super(`session ${session} seq ${seq}: ${detail}`);
    this.name = 'LogReferenceError';
  }
}
