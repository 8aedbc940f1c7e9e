import fs, { type Stats } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import picomatch from 'picomatch';
import { isWithin, realPathOf, rootRealPath, toPosix } from './paths.ts';

/**
 * File access that cannot be steered out of a root directory, whatever the model does to the tree
 * between two calls (or during one: a symlink swapped in a loop).
 *
 * Checking a path and then opening it by name again is a race: the name can point elsewhere by
 * the time it is opened. So a file is opened once, and what was opened is verified: on Linux the
 * name is first opened with O_PATH (which opens nothing: no FIFO blocks, no device reacts), the
 * descriptor's real path is read from /proc/self/fd and its type from fstat, and only then is the
 * very same inode reopened for reading or writing through /proc/self/fd/N. New files are created
 * inside a directory descriptor that was verified first (`/proc/self/fd/N/name` is openat()).
 * Other platforms get a check-then-open fallback with a post-open identity check; the residual
 * race there is documented in docs/security.md.
 */

const O_PATH = 0o10000000;
const { O_RDONLY, O_RDWR, O_CREAT, O_EXCL, O_NOFOLLOW, O_DIRECTORY, O_NONBLOCK, O_NOCTTY } = fs.constants;
const O_CLOEXEC = (fs.constants as Record<string, number>).O_CLOEXEC ?? 0;
const PROC_FD = process.platform === 'linux' && fs.existsSync('/proc/self/fd');
const MAX_LINK_HOPS = 40;

const openAsync = promisify(fs.open) as (p: string, flags: number, mode?: number) => Promise<number>;
const readAsync = promisify(fs.read);
const writeAsync = promisify(fs.write);
const ftruncateAsync = promisify(fs.ftruncate);
const mkdirAsync = promisify(fs.mkdir);

/**
 * Where a tool may reach, as data (so a worker thread can apply it too): the working directory's
 * real path, and outside it either anywhere or the paths allow rules name (`{ pattern: '/etc/hosts',
 * absolute: true }`; a relative pattern is matched against the path relative to `real`).
 */
export interface RootSpec {
  readonly real: string;
  readonly anywhere?: boolean;
  readonly rules?: readonly { pattern: string; absolute: boolean }[];
}

/** Where a tool may reach. `contains` is given real (symlink-free) paths only. */
export interface FsRoot {
  readonly real: string;
  readonly spec: RootSpec;
  contains(realPath: string): boolean;
}

/** The FsRoot for a spec; its rules compiled once. */
export function rootFromSpec(spec: RootSpec): FsRoot {
  if (spec.anywhere) return { real: spec.real, spec, contains: () => true };
  const matchers = (spec.rules ?? []).map((r) => {
    const m = picomatch(r.pattern, { dot: true });
    return r.absolute ? m : (p: string) => m(toPosix(path.relative(spec.real, p)));
  });
  if (matchers.length === 0) return { real: spec.real, spec, contains: (p) => isWithin(spec.real, p) };
  return { real: spec.real, spec, contains: (p) => isWithin(spec.real, p) || matchers.some((m) => m(p)) };
}

/** For tools built with `allowOutsideCwd: true`: the permission policy checked every path already. */
export const UNCONFINED: FsRoot = rootFromSpec({ real: path.parse(process.cwd()).root, anywhere: true });

/** The root for a working directory; its real path is resolved once (see rootRealPath). */
export async function rootFor(cwd: string): Promise<FsRoot> {
  return rootFromSpec({ real: await rootRealPath(cwd) });
}

export type FileKind =
  | 'directory'
  | 'FIFO'
  | 'socket'
  | 'character device'
  | 'block device'
  | 'symbolic link'
  | 'special file';

export function kindOf(st: Stats): FileKind | 'file' {
  if (st.isFile()) return 'file';
  if (st.isDirectory()) return 'directory';
  if (st.isFIFO()) return 'FIFO';
  if (st.isSocket()) return 'socket';
  if (st.isCharacterDevice()) return 'character device';
  if (st.isBlockDevice()) return 'block device';
  if (st.isSymbolicLink()) return 'symbolic link';
  return 'special file';
}

export class OutsideRootError extends Error {
  readonly code = 'PATH_OUTSIDE_ROOT';
  constructor(
    readonly path: string,
    readonly real: string,
    readonly root: string,
  ) {
    super(`${path} resolves to ${real}, outside ${root}`);
    this.name = 'OutsideRootError';
  }
}

export class NotRegularFileError extends Error {
  readonly code = 'NOT_REGULAR_FILE';
  constructor(
    readonly path: string,
    readonly kind: FileKind,
  ) {
    super(`${path} is a ${kind}, not a regular file`);
    this.name = 'NotRegularFileError';
  }
}

export class FileTooLargeError extends Error {
  readonly code = 'FILE_TOO_LARGE';
  constructor(
    readonly path: string,
    readonly size: number,
    readonly maxBytes: number,
  ) {
    super(`${path} has ${size} bytes, over the cap of ${maxBytes}`);
    this.name = 'FileTooLargeError';
  }
}

export class HardLinkedFileError extends Error {
  readonly code = 'HARD_LINKED';
  constructor(
    readonly path: string,
    readonly links: number,
  ) {
    super(`${path} has ${links} hard links`);
    this.name = 'HardLinkedFileError';
  }
}

/**
 * A file with other hard links is the same inode under other names, which may be outside the
 * root (`ln ~/.bashrc proj/x`): writing it in place would change those too. Reading it is fine —
 * its content is what the name inside the root shows.
 */
function hardLinked(p: string, st: Stats): HardLinkedFileError | undefined {
  return st.nlink > 1 ? new HardLinkedFileError(p, st.nlink) : undefined;
}

function errno(code: string, message: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: ${message}`), { code });
}

function codeOf(e: unknown): string | undefined {
  return typeof e === 'object' && e !== null ? (e as { code?: string }).code : undefined;
}

const fdPath = (fd: number) => `/proc/self/fd/${fd}`;

function closeQuiet(fd: number): void {
  if (fd < 0) return;
  try {
    fs.closeSync(fd);
  } catch {
    // already closed
  }
}

/** What a descriptor really is, by the kernel's account (never the name it was opened by). */
function realOfFd(fd: number): string {
  return fs.readlinkSync(fdPath(fd));
}

function notRegular(p: string, st: Stats): NotRegularFileError | undefined {
  const kind = kindOf(st);
  return kind === 'file' ? undefined : new NotRegularFileError(p, kind);
}

/** Reads to end of file, refusing to hold more than maxBytes (a file may grow while we read). */
async function readAll(fd: number, sizeHint: number, maxBytes: number, p: string): Promise<Buffer> {
  let buf = Buffer.allocUnsafe(Math.min(Math.max(sizeHint, 0) + 1, maxBytes + 1));
  let len = 0;
  for (;;) {
    if (len === buf.length) {
      if (buf.length > maxBytes) throw new FileTooLargeError(p, len, maxBytes);
      const bigger = Buffer.allocUnsafe(Math.min(buf.length * 2, maxBytes + 1));
      buf.copy(bigger, 0, 0, len);
      buf = bigger;
    }
    const want = buf.length - len;
    const { bytesRead } = await readAsync(fd, buf, len, want, len);
    len += bytesRead;
    // A regular file reads short only at its end: no extra read just to see zero bytes.
    if (bytesRead < want) break;
  }
  if (len > maxBytes) throw new FileTooLargeError(p, len, maxBytes);
  return buf.subarray(0, len);
}

export interface ReadResult {
  data: Buffer;
  stats: Stats;
  real: string;
}

/**
 * Reads a regular file inside `root`. Throws OutsideRootError, NotRegularFileError (directories,
 * FIFOs, sockets and devices are refused before they are opened for reading), FileTooLargeError,
 * or the system's error (ENOENT, EACCES, ENAMETOOLONG, ELOOP…).
 */
export async function readFileConfined(
  root: FsRoot,
  absolute: string,
  maxBytes: number,
): Promise<ReadResult> {
  if (!PROC_FD) return readFileFallback(root, absolute, maxBytes);
  const pfd = await openAsync(absolute, O_PATH | O_CLOEXEC);
  let fd = -1;
  try {
    const real = realOfFd(pfd);
    if (!root.contains(real)) throw new OutsideRootError(absolute, real, root.real);
    const stats = fs.fstatSync(pfd);
    const bad = notRegular(absolute, stats);
    if (bad) throw bad;
    if (stats.size > maxBytes) throw new FileTooLargeError(absolute, stats.size, maxBytes);
    fd = await openAsync(fdPath(pfd), O_RDONLY | O_NOCTTY | O_CLOEXEC);
    return { data: await readAll(fd, stats.size, maxBytes, absolute), stats, real };
  } finally {
    closeQuiet(fd);
    closeQuiet(pfd);
  }
}

async function readFileFallback(root: FsRoot, absolute: string, maxBytes: number): Promise<ReadResult> {
  const real = await realPathOf(absolute);
  if (!root.contains(real)) throw new OutsideRootError(absolute, real, root.real);
  const before = await fs.promises.stat(real);
  const bad = notRegular(absolute, before);
  if (bad) throw bad;
  // Non-blocking: if the name became a FIFO since, opening it must not hang.
  const fd = await openAsync(real, O_RDONLY | O_NONBLOCK | O_NOCTTY);
  try {
    const stats = fs.fstatSync(fd);
    if (stats.ino !== before.ino || stats.dev !== before.dev) {
      throw errno('ESTALE', `${absolute} changed while it was opened`);
    }
    if (stats.size > maxBytes) throw new FileTooLargeError(absolute, stats.size, maxBytes);
    return { data: await readAll(fd, stats.size, maxBytes, absolute), stats, real };
  } finally {
    closeQuiet(fd);
  }
}

/**
 * What `absolute` is (following symlinks), once its real path is known to be inside the root.
 * Only for decisions and messages (file or directory?): what is then read is checked again.
 */
export async function statConfined(root: FsRoot, absolute: string): Promise<{ stats: Stats; real: string }> {
  let real: string;
  let stats: Stats;
  if (PROC_FD) {
    const pfd = await openAsync(absolute, O_PATH | O_CLOEXEC);
    try {
      real = realOfFd(pfd);
      stats = fs.fstatSync(pfd);
    } finally {
      closeQuiet(pfd);
    }
  } else {
    real = await realPathOf(absolute);
    stats = await fs.promises.stat(real);
  }
  if (!root.contains(real)) throw new OutsideRootError(absolute, real, root.real);
  return { stats, real };
}

/** An open, verified, writable regular file. The caller must `close()` it. */
export interface UpdatableFile {
  readonly fd: number;
  readonly real: string;
  /** True when this call created the file (it did not exist). */
  readonly created: boolean;
  readonly stats: Stats;
  read(maxBytes: number): Promise<Buffer>;
  /** Replaces the whole content. */
  replace(data: string | Buffer): Promise<Stats>;
  close(): void;
}

class OpenFile implements UpdatableFile {
  constructor(
    readonly fd: number,
    readonly real: string,
    readonly created: boolean,
    readonly stats: Stats,
    private readonly display: string,
  ) {}

  read(maxBytes: number): Promise<Buffer> {
    return readAll(this.fd, this.stats.size, maxBytes, this.display);
  }

  async replace(data: string | Buffer): Promise<Stats> {
    const buf = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    await ftruncateAsync(this.fd, 0);
    let off = 0;
    while (off < buf.length) {
      const { bytesWritten } = await writeAsync(this.fd, buf, off, buf.length - off, off);
      off += bytesWritten;
    }
    return fs.fstatSync(this.fd);
  }

  close(): void {
    closeQuiet(this.fd);
  }
}

export interface UpdateOptions {
  /** Create the file when it does not exist (never through a symlink that points outside). */
  create: boolean;
  /** Also create missing parent directories (inside the root only). */
  mkdirs?: boolean;
}

/**
 * Opens a regular file inside `root` for reading and writing, creating it if asked. Same errors
 * as readFileConfined; a missing file without `create` is ENOENT.
 */
export async function openFileForUpdate(
  root: FsRoot,
  absolute: string,
  opts: UpdateOptions,
): Promise<UpdatableFile> {
  if (!PROC_FD) return openForUpdateFallback(root, absolute, opts);
  return openForUpdate(root, absolute, absolute, opts, 0);
}

async function openForUpdate(
  root: FsRoot,
  display: string,
  absolute: string,
  opts: UpdateOptions,
  hops: number,
): Promise<UpdatableFile> {
  const dfd = await openDirConfined(root, path.dirname(absolute), opts.create && opts.mkdirs === true, 0);
  try {
    const entry = `${fdPath(dfd)}/${path.basename(absolute)}`;
    let pfd: number;
    try {
      pfd = await openAsync(entry, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    } catch (e) {
      if (codeOf(e) !== 'ENOENT' || !opts.create) throw e;
      try {
        // O_EXCL never follows a symlink: a name that appeared meanwhile is retried, not written through.
        const fd = await openAsync(entry, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o666);
        return new OpenFile(fd, realOfFd(fd), true, fs.fstatSync(fd), display);
      } catch (e2) {
        if (codeOf(e2) === 'EEXIST' && hops < MAX_LINK_HOPS)
          return openForUpdate(root, display, absolute, opts, hops + 1);
        throw e2;
      }
    }
    try {
      const st = fs.fstatSync(pfd);
      if (st.isSymbolicLink()) {
        // Followed by hand, so that its target gets the same checks (and is created only inside).
        if (hops >= MAX_LINK_HOPS) throw errno('ELOOP', `too many symbolic links at ${display}`);
        const target = path.resolve(realOfFd(dfd), fs.readlinkSync(entry));
        return openForUpdate(root, display, target, opts, hops + 1);
      }
      const bad = notRegular(display, st) ?? hardLinked(display, st);
      if (bad) throw bad;
      const fd = await openAsync(fdPath(pfd), O_RDWR | O_NOCTTY | O_CLOEXEC);
      return new OpenFile(fd, realOfFd(fd), false, st, display);
    } finally {
      closeQuiet(pfd);
    }
  } finally {
    closeQuiet(dfd);
  }
}

/** An O_PATH descriptor of a directory whose real path is inside the root, created if asked. */
async function openDirConfined(root: FsRoot, dir: string, mkdirs: boolean, depth: number): Promise<number> {
  let dfd: number;
  try {
    dfd = await openAsync(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
  } catch (e) {
    const parent = path.dirname(dir);
    if (codeOf(e) !== 'ENOENT' || !mkdirs || parent === dir || depth > 255) throw e;
    const pfd = await openDirConfined(root, parent, mkdirs, depth + 1);
    try {
      const child = `${fdPath(pfd)}/${path.basename(dir)}`;
      try {
        await mkdirAsync(child, 0o777);
      } catch (e2) {
        if (codeOf(e2) !== 'EEXIST') throw e2;
      }
      dfd = await openAsync(child, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    } finally {
      closeQuiet(pfd);
    }
  }
  const real = realOfFd(dfd);
  if (!root.contains(real)) {
    closeQuiet(dfd);
    throw new OutsideRootError(dir, real, root.real);
  }
  return dfd;
}

async function openForUpdateFallback(
  root: FsRoot,
  absolute: string,
  opts: UpdateOptions,
): Promise<UpdatableFile> {
  const real = await realPathOf(absolute);
  if (!root.contains(real)) throw new OutsideRootError(absolute, real, root.real);
  let fd: number;
  let created = false;
  try {
    fd = await openAsync(real, O_RDWR | O_NONBLOCK | O_NOCTTY);
  } catch (e) {
    if (codeOf(e) !== 'ENOENT' || !opts.create) throw e;
    if (opts.mkdirs) await fs.promises.mkdir(path.dirname(real), { recursive: true });
    fd = await openAsync(real, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW, 0o666);
    created = true;
  }
  const stats = fs.fstatSync(fd);
  const bad = notRegular(absolute, stats) ?? hardLinked(absolute, stats);
  if (bad) {
    closeQuiet(fd);
    throw bad;
  }
  return new OpenFile(fd, real, created, stats, absolute);
}
