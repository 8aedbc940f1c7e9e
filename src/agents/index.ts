export { type AgentFileResult, MAX_FRONT_MATTER_CHARS, parseAgentFile, readAgentFile } from './agentFile.ts';
export { GENERAL_PURPOSE_AGENT } from './builtin.ts';
export { AgentCatalog } from './catalog.ts';
export {
  type AgentDefinition,
  AgentDefinitionError,
  AgentFrontMatterSchema,
  TASK_TOOL_NAME,
} from './definition.ts';
export { type LoadAgentsOptions, loadAgents, MAX_AGENT_FILE_BYTES } from './loadAgents.ts';
export { childModel, MODEL_ALIASES } from './models.ts';
export { type TaskInput, TaskInputSchema, taskToolDescription } from './taskInput.ts';
