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

export class SessionLockedError extends Error {
  readonly code = 'SESSION_LOCKED';
  constructor(
    readonly session: string,
    readonly holder: string,
  ) {
    super(`session ${session} is being written by another process (${holder})`);
    this.name = 'SessionLockedError';
  }
}
