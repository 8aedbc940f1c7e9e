import { describe, expect, it } from 'vitest';
import { importPaths } from '../../src/memory/index.ts';

describe('@path imports in a CLAUDE.md', () => {
  it('at the start of a line or after a blank: relative, ~/ and absolute paths', () => {
    expect(
      importPaths(
        'See @README.md for the overview and @docs/git.md.\n- @~/.claude/my-notes.md\n@/etc/team/rules.md\n@./local.md',
      ),
    ).toEqual(['README.md', 'docs/git.md', '~/.claude/my-notes.md', '/etc/team/rules.md', './local.md']);
  });

  it('an escaped blank is part of the path; an email, a lone @ and @@ are not imports', () => {
    expect(importPaths('@my\\ notes.md\nmail me at a@b.com, or @ here, @@x')).toEqual(['my notes.md']);
  });

  it('never inside inline code spans or fenced code blocks', () => {
    const text = [
      'Install `@scope/pkg` and ``@a `b` @c`` first; then @real.md',
      '```ts',
      "import x from '@scope/pkg';",
      '@not-this.md',
      '```',
      '~~~',
      '@nor-this.md',
      '~~~',
      '@after-fence.md',
    ].join('\n');
    expect(importPaths(text)).toEqual(['real.md', 'after-fence.md']);
  });
});
