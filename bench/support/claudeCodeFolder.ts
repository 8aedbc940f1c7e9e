import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { type Block, Transcript, text, thinking, toolUse } from '../../test/support/claudeCodeTranscript.ts';

/**
 * A synthetic `~/.claude/projects` folder of a given size, written at bench time (nothing real
 * is read). Sessions look like working sessions: streamed responses with thinking, text and tool
 * calls, file-sized tool results, progress and snapshot lines, retries, compactions, a sub-agent.
 */

function prng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const WORDS =
  'the of and to in is it that for on with as was at by an be this are from or have not but what all were when we there can if will one each which their said time do about how up out them then many some so these would other into has more two like him see could no make than first been its who now people my made over did down only way find use may water long little very after words called just where most know'.split(
    ' ',
  );

function prose(rnd: () => number, bytes: number): string {
  const out: string[] = [];
  let n = 0;
  while (n < bytes) {
    const w = WORDS[Math.floor(rnd() * WORDS.length)]!;
    out.push(w);
    n += w.length + 1;
    if (rnd() < 0.08) {
      out.push('\n');
      n++;
    }
  }
  return out.join(' ');
}

/** One session of about `bytes`, with its sub-agent transcript when it has one. */
function session(sid: string, bytes: number, seed: number): { main: Transcript; agent: Transcript | null } {
  const rnd = prng(seed);
  const t = new Transcript({ sessionId: sid, salt: seed % 65_536, stepMs: 700 });
  let agent: Transcript | null = null;
  let size = 0;
  let turn = 0;
  const grow = () => {
    size = t.lines.reduce((n, l) => n + l.length + 1, 0);
  };
  while (size < bytes) {
    turn++;
    t.bare({ type: 'file-history-snapshot', messageId: `m${turn}`, snapshot: { trackedFileBackups: {} } });
    t.prompt(prose(rnd, 80 + Math.floor(rnd() * 300)));
    for (let round = 0; round < 2 + Math.floor(rnd() * 6); round++) {
      if (rnd() < 0.03) t.system('api_error', { error: { status: 529 }, retryInMs: 500, retryAttempt: 1 });
      const calls = 1 + Math.floor(rnd() * 3);
      const blocks: Block[] = [thinking(prose(rnd, 200)), text(prose(rnd, 150))];
      const ids: string[] = [];
      for (let c = 0; c < calls; c++) {
        const id = `toolu_${seed}_${turn}_${round}_${c}`;
        ids.push(id);
        blocks.push(toolUse(id, ['Read', 'Bash', 'Grep', 'Edit'][c % 4]!, { file_path: `/src/f${c}.ts` }));
      }
      if (!agent && rnd() < 0.05) {
        const id = `toolu_task_${seed}`;
        ids.push(id);
        blocks.push(toolUse(id, 'Task', { description: 'look', prompt: 'Look around.' }));
        agent = new Transcript({
          sessionId: sid,
          agentId: `a${seed.toString(16)}`,
          salt: (seed + 7) % 65_536,
        });
        agent.prompt('Look around.');
        agent.assistant([toolUse(`toolu_a${seed}`, 'Glob', { pattern: '**/*' })]);
        agent.toolResult(`toolu_a${seed}`, prose(rnd, 2_000));
        agent.assistant([text(prose(rnd, 300))]);
      }
      t.assistant(blocks, { usage: { input_tokens: 2_000 + turn * 500, output_tokens: 300 } });
      for (const id of ids) {
        t.bare({
          type: 'progress',
          data: { type: 'hook_progress', hookEvent: 'PostToolUse' },
          toolUseID: id,
        });
        t.toolResult(id, prose(rnd, 500 + Math.floor(rnd() * 5_000)), {
          toolUseResult: { stdout: '', interrupted: false },
        });
      }
    }
    if (rnd() < 0.1) t.compaction(prose(rnd, 1_500));
    t.assistant([text(prose(rnd, 400))]);
    t.stopHookSummary();
    t.system('turn_duration', { durationMs: 30_000 });
    grow();
  }
  return { main: t, agent };
}

export interface FolderStats {
  bytes: number;
  files: number;
  largest: number;
}

/**
 * Writes `totalBytes` of transcripts under `dir/-bench-project/`. Every session is at most
 * `largestBytes`; one is exactly about that size, so two folders with the same `largestBytes`
 * and different totals have the same largest session.
 */
export async function writeProjectsFolder(
  dir: string,
  { totalBytes, largestBytes, seed = 1 }: { totalBytes: number; largestBytes: number; seed?: number },
): Promise<FolderStats> {
  const project = path.join(dir, '-bench-project');
  await mkdir(project, { recursive: true });
  const rnd = prng(seed);
  const stats: FolderStats = { bytes: 0, files: 0, largest: 0 };
  for (let i = 0; stats.bytes < totalBytes; i++) {
    const target =
      i === 0 ? largestBytes : Math.min(largestBytes * 0.8, 100_000 + rnd() * largestBytes * 0.5);
    const sid = `00000000-0000-4000-8000-${(seed * 100_000 + i).toString(16).padStart(12, '0')}`;
    const { main, agent } = session(sid, target, seed * 1_000 + i);
    const body = main.jsonl();
    await writeFile(path.join(project, `${sid}.jsonl`), body);
    stats.bytes += Buffer.byteLength(body);
    stats.largest = Math.max(stats.largest, Buffer.byteLength(body));
    stats.files++;
    if (agent) {
      const dirOf = path.join(project, sid, 'subagents');
      await mkdir(dirOf, { recursive: true });
      const a = agent.jsonl();
      await writeFile(path.join(dirOf, `agent-a${(seed * 1_000 + i).toString(16)}.jsonl`), a);
      stats.bytes += Buffer.byteLength(a);
      stats.files++;
    }
  }
  return stats;
}
