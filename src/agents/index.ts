export { GENERAL_PURPOSE_AGENT } from './builtin.ts';
export {
  type AgentDefinition,
  AgentDefinitionError,
  AgentFrontMatterSchema,
  TASK_TOOL_NAME,
} from './definition.ts';
export { AgentCatalog, type LoadAgentsOptions, loadAgents, parseAgentFile } from './loadAgents.ts';
export { childModel, MODEL_ALIASES } from './models.ts';
export { type TaskInput, TaskInputSchema, taskToolDescription } from './taskInput.ts';
