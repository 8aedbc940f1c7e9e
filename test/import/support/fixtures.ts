import { fileURLToPath } from 'node:url';

/**
 * The synthetic Claude Code projects folder under test/fixtures/claude-code (written by
 * scripts/writeClaudeCodeFixtures.ts): one transcript per concern, named here so tests can
 * say which one they read.
 */
export const FIXTURES = fileURLToPath(new URL('../../fixtures/claude-code/projects/', import.meta.url));
export const PROJECT = `${FIXTURES}-work-demo/`;

export const SID = {
  tools: '11111111-0000-4000-8000-000000000001',
  compaction: '11111111-0000-4000-8000-000000000002',
  errors: '11111111-0000-4000-8000-000000000003',
  stopHooks: '11111111-0000-4000-8000-000000000004',
  interrupts: '11111111-0000-4000-8000-000000000005',
  subagents: '11111111-0000-4000-8000-000000000006',
  malformed: '11111111-0000-4000-8000-000000000007',
  stopReasons: '11111111-0000-4000-8000-000000000008',
  inlineSidechain: '11111111-0000-4000-8000-000000000009',
} as const;

export const transcriptFile = (sid: string) => `${PROJECT}${sid}.jsonl`;
export const subagentFile = (sid: string, agentId: string) =>
  `${PROJECT}${sid}/subagents/agent-${agentId}.jsonl`;

/** Agent ids of the sub-agent files. */
export const AGENT = {
  explore: 'a1e0f1',
  byResult: 'a2b0c2',
  byPrompt: 'a3c0d3',
  suggestion: 'aprompt_suggestion-1f2e3d',
  compact: 'acompact-5e4f2a',
} as const;
