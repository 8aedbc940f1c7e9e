/**
 * Just enough shell parsing for permission rules. `Bash(npm test:*)` must not allow
 * `npm test && rm -rf ~`, so a command is split into its simple commands (on ; && || | & and
 * newlines, outside quotes) and each must be allowed on its own. Constructs that can run or write
 * something the rule text does not show (command substitution, process substitution, output
 * redirection to a file) make the command `opaque`: no allow rule matches it, so it is asked.
 */
export interface SplitCommand {
  segments: string[];
  opaque: boolean;
}

/** Redirections that neither run nor write anything: `2>&1`, `>/dev/null`, `&>/dev/null`. */
const HARMLESS_REDIRECT = /^(?:>&\d|>>?[ \t]*\/dev\/null(?=$|[\s;&|)]))/;

export function splitCommand(command: string): SplitCommand {
  const segments: string[] = [];
  let opaque = false;
  let cur = '';
  let quote: '"' | "'" | undefined;
  const flush = () => {
    const s = cur.trim().replace(/\s+/g, ' ');
    if (s) segments.push(s);
    cur = '';
  };
  for (let i = 0; i < command.length; i++) {
    const c = command[i] as string;
    const next = command[i + 1];
    if (quote === "'") {
      if (c === "'") quote = undefined;
      cur += c;
      continue;
    }
    if (c === '\\') {
      cur += c + (next ?? '');
      i++;
      continue;
    }
    // Substitutions run inside double quotes too.
    if (c === '`' || (c === '$' && next === '(')) opaque = true;
    if (quote === '"') {
      if (c === '"') quote = undefined;
      cur += c;
      continue;
    }
    if (c === '"' || c === "'") {
      quote = c;
      cur += c;
      continue;
    }
    if ((c === '<' || c === '>') && next === '(') opaque = true;
    if (c === '>') {
      const harmless = HARMLESS_REDIRECT.exec(command.slice(i));
      if (harmless) {
        cur += harmless[0];
        i += harmless[0].length - 1;
        continue;
      }
      opaque = true;
    }
    if (c === ';' || c === '\n' || c === '|' || (c === '&' && next !== '>')) {
      flush();
      if ((c === '|' || c === '&') && next === c) i++;
      continue;
    }
    cur += c;
  }
  flush();
  // An unterminated quote means we cannot tell where the command ends.
  return { segments, opaque: opaque || quote !== undefined };
}

/** Whitespace-normalised form used for exact and prefix comparison. */
export function normaliseCommand(command: string): string {
  return command.trim().replace(/\s+/g, ' ');
}
