#!/usr/bin/env node
/**
 * `npm run browser:check` (CI, after `npm run build`): the browser-safe packages' built dist, bundled by esbuild for
 * the browser platform the way an app would bundle them, run in Debian's Chromium (headless, driven by
 * playwright-core; no browser download).
 *
 * A node:http server on 127.0.0.1 serves a blank page, the bundles, and forwards `/v1/*` and `/v1beta/*` (Gemini) to the scripted model of
 * @ai4ts/testing (same origin, so no CORS is involved). In the page, each bundle makes one streamed call (the text
 * must arrive in several deltas) and runs a streamed tool loop with two zod tools (three model requests, three tool
 * results, the scripted agent's answer): @ai4ts/chat, @ai4ts/responses, @ai4ts/messages and @ai4ts/gemini each with the core
 * pieces and zod an app would import beside them, and `ai4ts` for the three OpenAI-style and Anthropic protocols
 * through `new Ai4ts()` (one provider per client: Gemini's own preset is the @ai4ts/gemini bundle's).
 * @ai4ts/sse alone decodes the page's own streamed `fetch` with `parseSse`.
 * Exit 1 on any failure (a page error, a wrong answer, a bundle that does not build).
 */
import { existsSync } from 'node:fs';
import { createServer, request as httpRequest } from 'node:http';
import { build } from 'esbuild';
import { chromium } from 'playwright-core';
import { agentQuestion, agentScript, startMockModel } from '@ai4ts/testing';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
if (!existsSync(CHROMIUM)) {
  console.error(`browser:check: ${CHROMIUM} is absent (apt-get install -y chromium)`);
  process.exit(1);
}

/** What each bundle exports: the package, plus what an app using it imports beside it. */
const ENTRIES = {
  sse: "export * from '@ai4ts/sse';",
  chat: "export * from '@ai4ts/chat'; export { Transport, defineTool } from '@ai4ts/core'; export * as z from 'zod';",
  responses:
    "export * from '@ai4ts/responses'; export { Transport, defineTool } from '@ai4ts/core'; export * as z from 'zod';",
  messages:
    "export * from '@ai4ts/messages'; export { Transport, defineTool } from '@ai4ts/core'; export * as z from 'zod';",
  gemini:
    "export * from '@ai4ts/gemini'; export { Transport, defineTool } from '@ai4ts/core'; export * as z from 'zod';",
  ai4ts: "export * from 'ai4ts'; export * as z from 'zod';",
};

const bundles = new Map();
for (const [name, contents] of Object.entries(ENTRIES)) {
  const result = await build({
    stdin: { contents, resolveDir: process.cwd(), loader: 'js' },
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    write: false,
    logLevel: 'silent',
    tsconfigRaw: '{}', // the built dist, as published (the root tsconfig maps packages to their sources)
  });
  bundles.set(name, result.outputFiles[0].text);
}

/** Plain calls (no tools) get a streamed greeting; tool loops get the `npm start` agent, on every protocol. */
const GREETING = 'Hello from the scripted model, streamed into a browser tab.';
const model = await startMockModel({
  script: (body, context) => (Array.isArray(body.tools) && body.tools.length > 0 ? agentScript(body, context) : { content: GREETING }),
});
const modelUrl = new URL(model.url);

const server = createServer((req, res) => {
  const path = new URL(req.url ?? '/', 'http://localhost').pathname;
  if (path.startsWith('/v1/') || path.startsWith('/v1beta/')) {
    // Forward to the scripted model as bytes, streaming included.
    const upstream = httpRequest(
      { host: modelUrl.hostname, port: modelUrl.port, path: req.url, method: req.method, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
    return;
  }
  const name = /^\/bundles\/(\w+)\.js$/.exec(path)?.[1];
  if (name && bundles.has(name)) {
    res.writeHead(200, { 'content-type': 'text/javascript' });
    res.end(bundles.get(name));
    return;
  }
  if (path === '/') {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end('<!doctype html><meta charset="utf-8"><title>ai4ts browser check</title>');
    return;
  }
  res.writeHead(404).end();
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const origin = `http://127.0.0.1:${server.address().port}`;

/** Runs in the page: a streamed call and a streamed tool loop through one bundle. Returns what it saw. */
async function inPage({ name, question }) {
  const m = await import(`/bundles/${name}.js`);
  const baseURL = `${location.origin}/v1`;
  if (name === 'sse') {
    const response = await fetch(`${baseURL}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'mock-model', messages: [{ role: 'user', content: 'Hello?' }], stream: true }),
    });
    let text = '';
    let deltas = 0;
    for await (const event of m.parseSse(response)) {
      if (event.data === '[DONE]') break;
      const delta = JSON.parse(event.data).choices[0]?.delta?.content;
      if (delta) {
        text += delta;
        deltas++;
      }
    }
    return { text, deltas };
  }
  const { z } = m;
  const CELSIUS = { Paris: 18, Zürich: 21 };
  const tools = [
    m.defineTool({
      name: 'get_weather',
      description: 'The current weather of a city',
      parameters: z.object({ city: z.string() }),
      execute: async ({ city }) => ({ city, temperature: CELSIUS[city] ?? 15, unit: 'celsius' }),
    }),
    m.defineTool({
      name: 'convert_temperature',
      description: 'Converts a temperature between celsius and fahrenheit',
      parameters: z.object({ value: z.number(), from: z.enum(['celsius', 'fahrenheit']), to: z.enum(['celsius', 'fahrenheit']) }),
      execute: async ({ value, from, to }) => (from === to ? value : Math.round(((value * 9) / 5 + 32) * 10) / 10),
    }),
  ];
  const model = 'mock-model';
  const user = (content) => [{ role: 'user', content }];

  async function drain(stream) {
    let text = '';
    let deltas = 0;
    const toolResults = [];
    for await (const event of stream) {
      if (event.type === 'content') {
        text += event.delta;
        deltas++;
      }
      if (event.type === 'tool.result') toolResults.push(event.name);
    }
    return { text, deltas, toolResults, final: await stream.final() };
  }
  const summary = async (plain, loop) => {
    const a = await drain(plain);
    const b = await drain(loop);
    return { text: a.text, deltas: a.deltas, loopText: b.final.text, loopStreamed: b.text, toolResults: b.toolResults, steps: b.final.steps.length };
  };

  if (name === 'ai4ts') {
    const client = new m.Ai4ts({ baseURL, apiKey: 'browser-check' });
    return {
      chat: await summary(
        client.chat.stream({ model, messages: user('Hello?') }),
        client.chat.stream({ model, messages: user(question), tools, maxSteps: 5 }),
      ),
      responses: await summary(
        client.responses.stream({ model, input: 'Hello?' }),
        client.responses.stream({ model, input: question, tools, maxSteps: 5 }),
      ),
      messages: await summary(
        client.messages.stream({ model, max_tokens: 256, messages: user('Hello?') }),
        client.messages.stream({ model, max_tokens: 256, messages: user(question), tools, maxSteps: 5 }),
      ),
    };
  }
  if (name === 'chat') {
    const transport = new m.Transport({ baseURL, apiKey: 'browser-check' });
    return summary(
      m.streamChatCompletion(transport, { model, messages: user('Hello?') }),
      m.streamChatToolLoop(transport, { model, messages: user(question), tools, maxSteps: 5 }),
    );
  }
  if (name === 'responses') {
    const transport = new m.Transport({ baseURL, apiKey: 'browser-check' });
    return summary(
      m.streamResponse(transport, { model, input: 'Hello?' }),
      m.streamResponsesToolLoop(transport, { model, input: question, tools, maxSteps: 5 }),
    );
  }
  if (name === 'gemini') {
    const transport = new m.Transport({ provider: 'gemini', baseURL: `${location.origin}/v1beta`, apiKey: 'browser-check' });
    const contents = (text) => [{ role: 'user', parts: [{ text }] }];
    return summary(
      m.streamGenerateContent(transport, { model, contents: contents('Hello?') }),
      m.streamGeminiToolLoop(transport, { model, contents: contents(question), tools, maxSteps: 5 }),
    );
  }
  const transport = new m.Transport({ provider: 'anthropic', baseURL, apiKey: 'browser-check' });
  return summary(
    m.streamMessage(transport, { model, max_tokens: 256, messages: user('Hello?') }),
    m.streamMessagesToolLoop(transport, { model, max_tokens: 256, messages: user(question), tools, maxSteps: 5 }),
  );
}

const ANSWER = 'Right now it is Paris: 18 °C, Zürich: 21 °C. The warmer city is Zürich at 21 °C, which is 69.8 °F.';
const TOOLS = ['get_weather', 'get_weather', 'convert_temperature'];
const failures = [];
function expectRun(label, seen) {
  const problems = [];
  if (seen.text !== GREETING) problems.push(`streamed text ${JSON.stringify(seen.text)}`);
  if (!(seen.deltas > 3)) problems.push(`${seen.deltas} content deltas (a stream should bring several)`);
  if ('loopText' in seen) {
    if (seen.loopText !== ANSWER) problems.push(`tool loop answered ${JSON.stringify(seen.loopText)}`);
    if (seen.loopStreamed !== ANSWER) problems.push(`tool loop streamed ${JSON.stringify(seen.loopStreamed)}`);
    if (JSON.stringify([...seen.toolResults].sort()) !== JSON.stringify([...TOOLS].sort())) {
      problems.push(`tool results ${seen.toolResults.join(', ')}`);
    }
    if (seen.steps !== 3) problems.push(`${seen.steps} steps`);
  }
  if (problems.length > 0) failures.push(`${label}: ${problems.join('; ')}`);
  console.log(`${problems.length > 0 ? 'FAIL' : 'ok  '} ${label}: ${seen.deltas} deltas${'steps' in seen ? `, tool loop in ${seen.steps} steps` : ''}`);
}

const browser = await chromium.launch({
  executablePath: CHROMIUM,
  args: ['--no-sandbox', '--headless', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
try {
  for (const name of bundles.keys()) {
    const page = await browser.newPage();
    const pageErrors = [];
    page.on('pageerror', (error) => pageErrors.push(error.message));
    await page.goto(origin);
    const kb = (bundles.get(name).length / 1024).toFixed(0);
    try {
      const seen = await page.evaluate(inPage, { name, question: agentQuestion });
      if (name === 'ai4ts') for (const [protocol, run] of Object.entries(seen)) expectRun(`ai4ts (${kb} KB) ${protocol}`, run);
      else expectRun(`${name === 'sse' ? '@ai4ts/sse' : `@ai4ts/${name}`} (${kb} KB)`, seen);
    } catch (error) {
      failures.push(`${name}: ${error instanceof Error ? error.message : error}`);
      console.log(`FAIL ${name}: ${error instanceof Error ? error.message : error}`);
    }
    if (pageErrors.length > 0) failures.push(`${name}: page errors: ${pageErrors.join('; ')}`);
    await page.close();
  }
} finally {
  await browser.close();
  server.close();
  await model.close();
}
if (failures.length > 0) {
  console.log(`browser:check: ${failures.length} failure(s)\n  ${failures.join('\n  ')}`);
  process.exit(1);
}
console.log(`browser:check: ${bundles.size} bundles stream and run the tool loop in Chromium ${browser.version()}`);
