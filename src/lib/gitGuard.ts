/**
 * Git configuration every child process gets through its environment (`childEnv()` in
 * secrets.ts: Bash commands, hooks), so that git run there never uses a repository the model
 * planted in the tree.
 *
 * Git finds its repository by walking up from the working directory, and a directory holding
 * `HEAD`, `objects/` and `refs/` is a repository by itself (a bare one): four files written with
 * the file tools turn any folder into one, and its `config` (`core.fsmonitor`, `core.sshCommand`,
 * aliases, hooks) then runs commands for an allowed `git status` or `git fetch`. With
 * `safe.bareRepository=explicit` git refuses a bare repository it was not pointed at with
 * `--git-dir`/`GIT_DIR`; repositories with a `.git` (worktrees, submodules) are unaffected.
 * The setting only counts from protected configuration (system, global, command line): the
 * `GIT_CONFIG_COUNT` variables are the command line's, which a planted config cannot override.
 * Writing the files that would make a folder a repository is a protected path as well
 * (src/tools/protectedPaths.ts); this is what stops a repository made some other way (an allowed
 * `cp -r`, an archive extracted).
 */

/** Appended after any the user's environment already has, so that ours are the last word. */
export const GIT_GUARD_CONFIG: readonly (readonly [key: string, value: string])[] = [
  ['safe.bareRepository', 'explicit'],
];

/** `env` with the guard's git configuration added through GIT_CONFIG_COUNT/KEY_n/VALUE_n. */
export function withGitGuard(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const given = env.GIT_CONFIG_COUNT;
  const count = given === undefined || given === '' ? 0 : Number(given);
  // A count git cannot read makes git refuse to run at all; nothing to add to then.
  if (!Number.isSafeInteger(count) || count < 0) return env;
  const out: NodeJS.ProcessEnv = { ...env };
  let k = count;
  for (const [key, value] of GIT_GUARD_CONFIG) {
    out[`GIT_CONFIG_KEY_${k}`] = key;
    out[`GIT_CONFIG_VALUE_${k}`] = value;
    k++;
  }
  out.GIT_CONFIG_COUNT = String(k);
  return out;
}
