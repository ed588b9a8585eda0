/**
 * The web-chat approval flow: an agent whose `transfer` tool needs a person's approval. The server runs the tool loop
 * with ai4ts against a scripted model; when the loop suspends, it keeps the state as JSON (a Map stands in for your
 * database) and the page shows the pending call with Approve and Deny. The decision resumes the loop with a new client,
 * as another server would, minutes later.
 *
 *   npx tsx examples/web-chat/approval.ts     # then open the printed URL
 */
import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { type MockModel, startMockModel } from '@ai4ts/testing';
import { Ai4ts, type ApprovalDecision, type ChatLoopState, defineTool } from 'ai4ts';
import * as z from 'zod';

const HERE = new URL('./', import.meta.url);

/** The agent's one tool: moving money waits for a person. */
const transfer = defineTool({
  name: 'transfer',
  description: 'Send money to someone',
  parameters: z.object({ amount: z.number(), to: z.string() }),
  needsApproval: true,
  execute: ({ amount, to }) => ({ sent: amount, to }),
});

/** The scripted model: it asks for the transfer, then reports what the tool answered. */
function scriptedModel(): Promise<MockModel> {
  return startMockModel({
    script: (_body, context) => {
      const tool = context.protocol === 'chat' ? context.body.messages.find((m) => m.role === 'tool') : undefined;
      if (!tool) return { toolCalls: [{ name: 'transfer', arguments: { amount: 250, to: 'Bob' } }] };
      return { content: String(tool.content).includes('denied') ? 'I did not send the money.' : 'Sent 250 to Bob.' };
    },
  });
}

export interface ApprovalChat {
  /** The page's URL. */
  url: string;
  close(): Promise<void>;
}

/** Starts the scripted model and the page server (the agent under /agent/), both on 127.0.0.1. */
export async function startApprovalChat(port = 0): Promise<ApprovalChat> {
  const model = await scriptedModel();
  const client = () => new Ai4ts({ provider: 'openai-compatible', baseURL: model.baseURL, apiKey: 'demo', maxRetries: 0 });
  // Your database: suspended loops by token, stored as the JSON text they are.
  const suspended = new Map<string, string>();

  const site = createServer((req, res) => {
    void route(req, res).catch((error: unknown) => json(res, 500, { error: String(error) }));
  });
  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (req.method === 'GET' && path === '/') return page(res, 'approval.html', 'text/html; charset=utf-8');
    if (req.method === 'GET' && path === '/approval-page.js') return page(res, 'approval-page.js', 'text/javascript; charset=utf-8');
    if (req.method === 'POST' && path === '/agent/ask') {
      const { question } = z.object({ question: z.string() }).parse(await body(req));
      const result = await client().chat.create({
        model: 'mock-model',
        messages: [{ role: 'user', content: question }],
        tools: [transfer],
      });
      if (result.status !== 'awaiting_approval') return json(res, 200, { status: result.status, text: result.text });
      const token = crypto.randomUUID();
      suspended.set(token, JSON.stringify(result.state));
      return json(res, 200, { status: result.status, token, pending: result.pending });
    }
    if (req.method === 'POST' && path === '/agent/decide') {
      const decision = z
        .object({ token: z.string(), approvals: z.record(z.string(), z.union([z.literal(true), z.object({ deny: z.string() })])) })
        .parse(await body(req));
      const stored = suspended.get(decision.token);
      if (stored === undefined) return json(res, 404, { error: 'No such approval' });
      suspended.delete(decision.token);
      const state: ChatLoopState = JSON.parse(stored);
      const approvals: Record<string, ApprovalDecision> = decision.approvals;
      const result = await client().chat.resume(state, { approvals, tools: [transfer] });
      return json(res, 200, { status: result.status, text: result.text });
    }
    res.writeHead(404).end();
  }

  const address = await new Promise<number>((resolve) =>
    site.listen(port, '127.0.0.1', () => resolve((site.address() as AddressInfo).port)),
  );
  return {
    url: `http://127.0.0.1:${address}/`,
    close: async () => {
      site.closeAllConnections();
      await new Promise<void>((resolve) => site.close(() => resolve()));
      await model.close();
    },
  };
}

async function body(req: IncomingMessage): Promise<unknown> {
  let text = '';
  for await (const chunk of req) text += chunk;
  return JSON.parse(text);
}

function json(res: ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
}

async function page(res: ServerResponse, file: string, type: string): Promise<void> {
  const text = await readFile(fileURLToPath(new URL(file, HERE)));
  res.writeHead(200, { 'content-type': type, 'cache-control': 'no-store' }).end(text);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const chat = await startApprovalChat(Number(process.env.PORT ?? 3001));
  process.stdout.write(`approval chat on ${chat.url}\n`);
}

