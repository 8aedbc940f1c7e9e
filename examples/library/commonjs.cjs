// A CommonJS project (no "type": "module") loads the ESM-only package with a dynamic import():
// require('reloop') fails with ERR_PACKAGE_PATH_NOT_EXPORTED (the package exports no require entry).
async function main() {
  const { MemoryEventStore, ScriptedModelClient, Session } = await import('reloop');
  const session = await Session.create({
    store: new MemoryEventStore(),
    model: new ScriptedModelClient({ turns: [{ text: 'Hello from CommonJS.', stop_reason: 'end_turn' }] }),
  });
  const result = await session.submit('hi');
  console.log(result.status, result.reason);
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
