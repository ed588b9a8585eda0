/**
 * An agent whose tools live in an MCP server: `examples/mcp-server.ts`, started over stdio as a child process.
 * The scripted model of @ai4ts/testing (127.0.0.1, no key) asks for the weather and a conversion; the tool loop finds
 * those tools through `mcp: [server]`, validates each call against the server's JSON Schema, calls the server, and
 * sends the results back. Progress the server reports shows up as `tool.progress` events.
 *
 *   npm run build && npx tsx examples/mcp-agent.ts
 */
import { fileURLToPath } from 'node:url';
import { connectMcp } from '@ai4ts/mcp';
import { agentQuestion, agentScript, startMockModel } from '@ai4ts/testing';
import { Ai4ts } from 'ai4ts';

const serverFile = fileURLToPath(new URL('./mcp-server.ts', import.meta.url));
await using server = await connectMcp({ command: process.execPath, args: ['--import', 'tsx', serverFile] });
console.log(`MCP tools: ${(await server.tools()).map((tool) => tool.name).join(', ')}`);

const model = await startMockModel({ script: agentScript });
try {
  const client = new Ai4ts({ baseURL: model.baseURL, apiKey: 'no-key-needed' });
  const stream = client.chat.stream({
    model: 'mock-model',
    messages: [{ role: 'user', content: agentQuestion }],
    mcp: [server],
  });
  for await (const event of stream) {
    if (event.type === 'content') process.stdout.write(event.delta);
    else if (event.type === 'tool_call.done') console.log(`\n-> ${event.name}(${event.arguments})`);
    else if (event.type === 'tool.progress') console.log(`   progress: ${event.message ?? event.progress}`);
    else if (event.type === 'tool.result') console.log(`<- ${event.name}: ${JSON.stringify(event.output)}`);
  }
  const result = await stream.final();
  console.log(`\n\n${result.steps.length} steps, finish: ${result.finishReason}`);
} finally {
  await model.close();
}
