/** What a Stop hook is told (the Claude Code hook contract, snake_case on the wire). */
export interface StopHookInput {
  session_id: string;
  hook_event_name: 'Stop';
  stop_hook_active: boolean;
  last_assistant_message: string;
  cwd: string;
}

/**
 * A Stop hook's answer. `block` keeps the loop going with the reason as feedback; `prevent`
 * ends the run (`stop_hook_prevented`); `error` (crash, timeout, bad output) is logged and
 * treated as allow, never as a block.
 */
export type StopHookResult =
  | { decision: 'allow' }
  | { decision: 'block'; reason: string }
  | { decision: 'prevent'; reason: string }
  | { decision: 'error'; reason: string };

export interface StopHook {
  /** Label for the log (`command` for command hooks). */
  readonly name: string;
  run(input: StopHookInput, signal: AbortSignal): Promise<StopHookResult>;
}
