/**
 * The commands that run other commands or change what later ones mean, by kind. bashCommand.ts
 * walks a command with these tables; a new wrapper or eval-like command belongs here.
 */

/** Run their operands as a command: looked through for allow (options parsed) and deny (any offset). */
export interface WrapperSpec {
  /** Options without an argument (short `-x` or long `--name`). */
  flags: readonly string[];
  /** Options that take an argument (`-n 5`, `-n5`, `--adjustment=5`, `--adjustment 5`). */
  withArg: readonly string[];
  /** Operands before the command (`timeout DURATION cmd`). */
  operands?: number;
  /** `NAME=value` operands before the command (env). */
  assignments?: boolean;
  /** `nice -10 cmd`. */
  numericOption?: boolean;
  /** With one of these the wrapper runs nothing (`command -v rm` only prints a path). */
  noRun?: readonly string[];
  /**
   * Options that take variables out of the command's environment (`env -i`, `env -u NAME`,
   * `exec -c`): like an assignment, they are never vouched for. Children get variables that keep
   * git from using a planted repository (src/lib/gitGuard.ts); these would remove them.
   */
  clearsEnv?: readonly string[];
}

export const WRAPPERS: Record<string, WrapperSpec> = {
  command: { flags: ['-p'], withArg: [], noRun: ['-v', '-V'] },
  builtin: { flags: [], withArg: [] },
  exec: { flags: ['-c', '-l'], withArg: ['-a'], clearsEnv: ['-c'] },
  env: {
    flags: ['-i', '-0', '--ignore-environment', '--null', '-'],
    withArg: ['-u', '--unset', '-C', '--chdir'],
    assignments: true,
    clearsEnv: ['-i', '-', '--ignore-environment', '-u', '--unset'],
  },
  nice: { flags: [], withArg: ['-n', '--adjustment'], numericOption: true },
  nohup: { flags: [], withArg: [] },
  time: { flags: ['-p'], withArg: [] },
  timeout: {
    flags: ['--preserve-status', '--foreground', '-v', '--verbose'],
    withArg: ['-s', '--signal', '-k', '--kill-after'],
    operands: 1,
  },
  stdbuf: { flags: [], withArg: ['-i', '-o', '-e', '--input', '--output', '--error'] },
  setsid: { flags: ['-c', '-f', '-w', '--ctty', '--fork', '--wait'], withArg: [] },
  xargs: {
    flags: [
      '-0',
      '-r',
      '-t',
      '-p',
      '-x',
      '-o',
      '--null',
      '--no-run-if-empty',
      '--verbose',
      '--interactive',
      '--exit',
      '--open-tty',
    ],
    withArg: [
      '-a',
      '-d',
      '-E',
      '-I',
      '-L',
      '-n',
      '-P',
      '-s',
      '--arg-file',
      '--delimiter',
      '--max-lines',
      '--max-args',
      '--max-procs',
      '--max-chars',
      '--process-slot-var',
    ],
  },
};

/** Run their operands as a command, with options we do not parse: deny looks at every offset, allow asks. */
export const OPAQUE_WRAPPERS = new Set([
  'sudo',
  'doas',
  'su',
  'runuser',
  'pkexec',
  'chroot',
  'ionice',
  'chrt',
  'taskset',
  'flock',
  'unbuffer',
  'strace',
  'ltrace',
  'gdb',
  'valgrind',
  'firejail',
  'unshare',
  'nsenter',
  'systemd-run',
  'script',
  'parallel',
  'watch',
  'ssh',
]);

export const SHELLS = new Set(['sh', 'bash', 'dash', 'zsh', 'ksh', 'mksh', 'ash', 'fish', 'busybox']);

/** Builtins that change what later names mean (aliases, loaded builtins, the command hash). */
export const NAME_CHANGING = new Set(['alias', 'shopt', 'enable', 'hash']);

/** Builtins that run code from a string or a file, or change the shell's state. */
export const NOT_ALLOWABLE: Record<string, string> = {
  eval: 'eval runs a string as a command',
  source: 'source runs a file in this shell',
  '.': '. runs a file in this shell',
  trap: 'trap runs a string as a command later',
  alias: 'alias changes what names mean',
  unalias: 'unalias changes what names mean',
  shopt: 'shopt changes how the shell parses',
  enable: 'enable changes the builtins',
  hash: 'hash changes where commands are found',
  set: 'set changes the shell state',
  declare: 'declare assigns variables',
  typeset: 'typeset assigns variables',
  export: 'export assigns variables',
  readonly: 'readonly assigns variables',
  local: 'local assigns variables',
  unset: 'unset changes variables',
  let: 'let assigns variables',
  read: 'read assigns variables',
  mapfile: 'mapfile assigns variables and may run a callback',
  readarray: 'readarray assigns variables and may run a callback',
  getopts: 'getopts assigns variables',
  compgen: 'compgen may run a command',
  complete: 'complete may run a command later',
  fc: 'fc runs commands from the history',
  bind: 'bind may run a command',
};

/** Builtins that run a string they are given (`mapfile -C cmd`, `compgen -C cmd`, `fc`). */
export const RUNS_STRINGS = new Set(['mapfile', 'readarray', 'compgen', 'complete', 'fc', 'bind']);

/**
 * Variables a command may be given without hiding a command from deny rules. Others can make a
 * program run one: `PS4='$(rm x)' bash -x`, `BASH_ENV=f`, `GIT_SSH_COMMAND`, `PAGER`, `EDITOR`,
 * `NODE_OPTIONS`, `LD_PRELOAD`, `PATH`…
 */
export const INERT_VARIABLES = new Set([
  'NODE_ENV',
  'CI',
  'DEBUG',
  'TZ',
  'LANG',
  'NO_COLOR',
  'FORCE_COLOR',
  'COLUMNS',
  'LINES',
  'RUST_LOG',
  'RUST_BACKTRACE',
  'PYTHONUNBUFFERED',
  'PYTHONDONTWRITEBYTECODE',
  'PORT',
  'VERBOSE',
]);

/** Names whose deny-side handling goes beyond their own view (they run or change commands). */
export const DENY_SPECIAL = new Set([
  ...Object.keys(WRAPPERS),
  ...OPAQUE_WRAPPERS,
  ...SHELLS,
  ...NAME_CHANGING,
  ...RUNS_STRINGS,
  'su',
  'eval',
  'trap',
  'source',
  '.',
  'find',
]);
