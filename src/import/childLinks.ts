import { readFile } from 'node:fs/promises';
import type { ParentLink } from '../store/records.ts';
import type { MappedTranscript, TranscriptLinks } from './claudeCode/mapTranscript.ts';

/** `agent-<id>.meta.json` as Claude Code writes it beside a sub-agent's transcript. */
export interface AgentMeta {
  agentType: string | null;
  description: string | null;
  toolUseId: string | null;
}

export async function readAgentMeta(file: string | null): Promise<AgentMeta | null> {
  if (!file) return null;
  try {
    const raw = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>;
    const s = (v: unknown) => (typeof v === 'string' && v ? v : null);
    return { agentType: s(raw.agentType), description: s(raw.description), toolUseId: s(raw.toolUseId) };
  } catch {
    // An unreadable meta file costs only the link details it would have given.
    return null;
  }
}

/** The parent as the link needs it: its reloop session id and what its transcript said. */
export interface ParentSide {
  session: string;
  links: TranscriptLinks | null;
  /** Task calls already linked to a child (one call starts one sub-agent). */
  claimed: Set<string>;
}

/** Special sub-agents name their job in their id: `acompact-…` summarises for a compaction. */
const SPECIAL_AGENT = /^a([a-z][a-z_]*)-[0-9a-z]+$/;

export function isCompactionAgent(agentId: string): boolean {
  return agentId.startsWith('acompact');
}

/** Records of an import are session.created (seq 1) then the drafts in order. */
export const seqOfDraft = (draft: number) => draft + 2;

/**
 * How a sub-agent links to its parent (docs/import.md): the Task call that started it — named
 * by the meta file, by the call's result (`toolUseResult.agentId`), by progress lines, or, last,
 * by its prompt being the call's prompt; a compaction summariser to the compaction whose
 * summary it wrote (by text, else the first one after it).
 */
export function linkChild(
  parent: ParentSide,
  child: { agentId: string; meta: AgentMeta | null; mapped: MappedTranscript },
): ParentLink {
  const links = parent.links;
  const prompt = child.mapped.firstPrompt?.trim() ?? null;
  let toolUseId = child.meta?.toolUseId ?? links?.agents.get(child.agentId) ?? null;
  if (!toolUseId && links && prompt) {
    for (const [id, task] of links.tasks) {
      if (!parent.claimed.has(id) && task.prompt?.trim() === prompt) {
        toolUseId = id;
        break;
      }
    }
  }
  if (toolUseId) parent.claimed.add(toolUseId);
  const task = toolUseId ? links?.tasks.get(toolUseId) : undefined;
  const special = SPECIAL_AGENT.exec(child.agentId)?.[1];
  const agent = child.meta?.agentType ?? task?.agent ?? (task ? 'general-purpose' : (special ?? 'unknown'));
  const link: ParentLink = { session: parent.session, run: task?.run ?? null, toolUseId, agent };
  if (isCompactionAgent(child.agentId) && links) {
    const compaction = compactionOf(links, child.mapped);
    if (compaction) {
      link.run = compaction.run;
      link.compaction = { seq: seqOfDraft(compaction.draft) };
    }
  }
  return link;
}

function compactionOf(links: TranscriptLinks, mapped: MappedTranscript) {
  const written = mapped.lastAssistantText?.trim() ?? '';
  if (written.length >= 20) {
    const byText = links.compactions.find((c) => c.summary.includes(written));
    if (byText) return byText;
  }
  // The summariser finishes just before the boundary its summary lands behind.
  const end = mapped.lastAt ?? 0;
  return links.compactions.find((c) => c.at >= end) ?? null;
}
