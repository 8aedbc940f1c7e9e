export { childRegistry, MAX_PARALLEL_CHILDREN, type SubAgentsOptions } from './childOptions.ts';
export {
  type ChildFactory,
  Children,
  type ChildSession,
  type InterruptedTask,
  type ParentSide,
} from './children.ts';
export { taskTool, withTaskTool } from './taskTool.ts';
