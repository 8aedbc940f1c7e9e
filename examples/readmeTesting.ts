import { builtinTools } from 'reloop';
import { runSession, scriptedModel, text, toolUse } from 'reloop/testing';

const { result, reasons } = await runSession({
  model: scriptedModel([toolUse('Read', { file_path: 'a.txt' }), text('done')]),
  prompt: 'go',
  tools: builtinTools(),
});
// reasons: query_built, tool_use_requested, tool_result_continuation, query_built, finish_requested, completed
console.log(result.status, reasons);
