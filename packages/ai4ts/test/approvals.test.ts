/**
 * Approvals that survive a restart, on each protocol, over HTTP against @ai4ts/testing's scripted model: the loop
 * stops before a call that needs approval (the other call of the step has run), its state goes to a file as JSON,
 * and a child process resumes it, approving or denying; the next request must carry every result in call order. A
 * changed or mismatched state is refused before anything runs. The same through `stream()`.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type MockModel, type MockTurn, startMockModel } from '@ai4ts/testing';
import { Ai4ts, type ApprovalDecision, type ChatLoopState, LoopStateError, type ToolLoopEvent } from 'ai4ts';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { bankTools } from './fixtures/bank-tools.js';
import { geminiToolResults } from './fixtures/gemini-tool-results.js';

const root = fileURLToPath(new URL('../../..', import.meta.url));
const loopbackOnly = fileURLToPath(new URL('./fixtures/loopback-fetch.mjs', import.meta.url));
const child = fileURLToPath(new URL('./fixtures/resume-child.ts', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'ai4ts-approvals-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const script: MockTurn[] = [
  {
    toolCalls: [
      { name: 'balance', arguments: { account: 'alice' } },
      { name: 'transfer', arguments: { amount: 500, to: 'bob' } },
    ],
  },
  { content: 'All settled.' },
];
const QUESTION = 'Check my balance and send 500 to Bob.';

const models: MockModel[] = [];
afterAll(async () => {
  await Promise.all(models.map((model) => model.close()));
});

/**
 * The Gemini script gives its calls ids, as the API may: each must come back on its `functionResponse`, after a
 * restart too.
 */
const geminiScript: MockTurn[] = [
  {
    toolCalls: [
      { id: 'fc-balance-1', name: 'balance', arguments: { account: 'alice' } },
      { id: 'fc-transfer-2', name: 'transfer', arguments: { amount: 500, to: 'bob' } },
    ],
  },
  { content: 'All settled.' },
];

/** A client of a fresh scripted model; Gemini's is the `gemini` provider at its `/v1beta` base. */
async function client(protocol: ProtocolName = 'chat'): Promise<{ client: Ai4ts; model: MockModel; baseURL: string }> {
  const model = await startMockModel({ script: protocol === 'gemini' ? geminiScript : script, seed: 5 });
  models.push(model);
  const at =
    protocol === 'gemini'
      ? ({ provider: 'gemini', baseURL: model.geminiBaseURL } as const)
      : ({ provider: 'openai-compatible', baseURL: model.baseURL } as const);
  return { client: new Ai4ts({ ...at, apiKey: 'test-key', maxRetries: 0 }), model, baseURL: at.baseURL };
}

type ProtocolName = 'chat' | 'responses' | 'messages' | 'gemini';
const PROTOCOL_NAMES: readonly ProtocolName[] = ['chat', 'responses', 'messages', 'gemini'];
/** A Gemini 3 model: the scripted server refuses a function-call turn whose thought signature did not survive. */
const GEMINI_MODEL = 'gemini-3-mock';

/** A value as a state read back from storage is: untyped JSON, which the SDK must check itself. */
function fromJson(value: unknown) {
  return JSON.parse(JSON.stringify(value));
}

/** Starts each protocol's loop; `toolResults` reads the results a request body sends back, by call id, in order. */
const protocols = {
  chat: {
    create: (c: Ai4ts, ran: string[]) =>
      c.chat.create({ model: 'mock-model', messages: [{ role: 'user', content: QUESTION }], tools: bankTools(ran) }),
    stream: (c: Ai4ts, ran: string[]) =>
      c.chat.stream({ model: 'mock-model', messages: [{ role: 'user', content: QUESTION }], tools: bankTools(ran) }),
    toolResults: (body: unknown): [string, unknown][] =>
      z
        .object({ messages: z.array(z.looseObject({ role: z.string(), tool_call_id: z.string().optional(), content: z.unknown().optional() })) })
        .parse(body)
        .messages.filter((m) => m.role === 'tool')
        .map((m) => [m.tool_call_id ?? '', m.content]),
  },
  responses: {
    create: (c: Ai4ts, ran: string[]) => c.responses.create({ model: 'mock-model', input: QUESTION, tools: bankTools(ran) }),
    stream: (c: Ai4ts, ran: string[]) => c.responses.stream({ model: 'mock-model', input: QUESTION, tools: bankTools(ran) }),
    toolResults: (body: unknown): [string, unknown][] =>
      z
        .object({ input: z.array(z.looseObject({ type: z.string().optional(), call_id: z.string().optional(), output: z.unknown().optional() })) })
        .parse(body)
        .input.filter((i) => i.type === 'function_call_output')
        .map((i) => [i.call_id ?? '', i.output]),
  },
  messages: {
    create: (c: Ai4ts, ran: string[]) =>
      c.messages.create({
        model: 'mock-model',
        max_tokens: 256,
        messages: [{ role: 'user', content: QUESTION }],
        tools: bankTools(ran),
      }),
    stream: (c: Ai4ts, ran: string[]) =>
      c.messages.stream({
        model: 'mock-model',
        max_tokens: 256,
        messages: [{ role: 'user', content: QUESTION }],
        tools: bankTools(ran),
      }),
    toolResults: (body: unknown): [string, unknown][] =>
      z
        .object({ messages: z.array(z.looseObject({ content: z.unknown().optional() })) })
        .parse(body)
        .messages.flatMap((m) => z.array(z.looseObject({ type: z.string() })).catch([]).parse(m.content))
        .filter((b) => b.type === 'tool_result')
        .map((b) => [String(b.tool_use_id), b.content]),
  },
  gemini: {
    create: (c: Ai4ts, ran: string[]) =>
      c.gemini.create({ model: GEMINI_MODEL, contents: [{ role: 'user', parts: [{ text: QUESTION }] }], tools: bankTools(ran) }),
    stream: (c: Ai4ts, ran: string[]) =>
      c.gemini.stream({ model: GEMINI_MODEL, contents: [{ role: 'user', parts: [{ text: QUESTION }] }], tools: bankTools(ran) }),
    toolResults: geminiToolResults,
  },
} as const;

/** Runs the child once with every job; resolves to its JSON lines. */
async function resumeInChild(jobs: object[]): Promise<unknown[]> {
  const proc = spawn(process.execPath, ['--import', 'tsx', '--import', loopbackOnly, child, JSON.stringify(jobs)], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  proc.stdout.on('data', (chunk) => {
    stdout += chunk;
  });
  proc.stderr.on('data', (chunk) => {
    stderr += chunk;
  });
  const [code] = (await once(proc, 'exit')) as [number | null];
  expect(stderr).toBe('');
  expect(code).toBe(0);
  return stdout.trim().split('\n').map((line) => JSON.parse(line));
}

describe('an approval stopped here, resumed in another process', () => {
  it('approve and deny, on every protocol', async () => {
    const runs: { protocol: ProtocolName; decision: 'approve' | 'deny'; model: MockModel; ids: string[] }[] = [];
    const jobs: object[] = [];
    for (const protocol of PROTOCOL_NAMES) {
      for (const decision of ['approve', 'deny'] as const) {
        const { client: c, model, baseURL } = await client(protocol);
        const ran: string[] = [];
        const result = await protocols[protocol].create(c, ran);
        expect(result.status).toBe('awaiting_approval');
        expect(result.finishReason).toBe('tool_calls');
        // The call without needsApproval ran before the loop stopped; the transfer did not.
        expect(ran).toEqual(['balance:alice']);
        const ids = result.steps[0]?.toolCalls.map((call) => call.id) ?? [];
        expect(result.pending).toEqual([{ id: ids[1], name: 'transfer', args: { amount: 500, to: 'bob' }, awaiting: 'approval' }]);
        expect(result.state?.protocol).toBe(protocol);
        expect(result.state?.step).toBe(1);
        expect(model.requests).toHaveLength(1);
        const stateFile = join(dir, `${protocol}-${decision}.json`);
        writeFileSync(stateFile, JSON.stringify(result.state));
        const approvals: Record<string, ApprovalDecision> = {
          [ids[1] ?? '']: decision === 'approve' ? true : { deny: 'over the daily limit' },
        };
        jobs.push({ protocol, baseURL, stateFile, approvals });
        runs.push({ protocol, decision, model, ids });
      }
    }

    const outcomes = await resumeInChild(jobs);

    expect(outcomes).toHaveLength(runs.length);
    for (const [index, run] of runs.entries()) {
      const outcome = outcomes[index];
      expect(outcome).not.toMatchObject({ pid: process.pid });
      expect(outcome).toMatchObject({ status: 'done', text: 'All settled.', finishReason: 'stop', steps: [2] });
      expect(outcome).toMatchObject({ ran: run.decision === 'approve' ? ['transfer:500:bob'] : [] });
      expect(run.model.requests).toHaveLength(2);
      const sent = protocols[run.protocol].toolResults(run.model.requests[1]?.body);
      const transfer =
        run.decision === 'approve'
          ? '{"sent":500,"to":"bob"}'
          : JSON.stringify({ error: 'The call to tool "transfer" was denied: over the daily limit' });
      expect(sent).toEqual([
        [run.ids[0], '{"account":"alice","balance":1000}'],
        [run.ids[1], transfer],
      ]);
    }
  }, 60_000);
});

describe('a state that does not check out is refused before anything runs', () => {
  let model: MockModel;
  let state: ChatLoopState;
  let ids: string[];
  let c: Ai4ts;

  afterEach(() => {
    expect(model.requests).toHaveLength(1);
  });

  async function suspended() {
    ({ client: c, model } = await client());
    const result = await protocols.chat.create(c, []);
    if (result.status !== 'awaiting_approval') throw new Error('expected a suspended loop');
    state = JSON.parse(JSON.stringify(result.state));
    ids = result.pending.map((call) => call.id);
  }

  async function refusal(run: () => Promise<unknown>): Promise<LoopStateError> {
    const error = await run().catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(LoopStateError);
    return error as LoopStateError;
  }

  it('changed arguments', async () => {
    await suspended();
    const call = state.calls.find((entry) => entry.id === ids[0]);
    if (call) call.arguments = '{"amount":50000,"to":"mallory"}';
    const ran: string[] = [];
    const error = await refusal(() => c.chat.resume(state, { approvals: { [ids[0] ?? '']: true }, tools: bankTools(ran) }));
    expect(error.problem).toBe('tampered');
    expect(error.message).toContain('do not match their hash');
    expect(ran).toEqual([]);
  });

  it('another protocol, another version, not a state', async () => {
    await suspended();
    const tools = bankTools([]);
    const approvals = { [ids[0] ?? '']: true as const };
    expect((await refusal(() => c.messages.resume(fromJson(state), { approvals, tools }))).problem).toBe('protocol');
    expect((await refusal(() => c.chat.resume(fromJson({ ...state, version: 2 }), { approvals, tools }))).problem).toBe('version');
    expect((await refusal(() => c.chat.resume(fromJson({ hello: 1 }), { approvals, tools }))).problem).toBe('invalid');
  });

  it('decisions that miss a pending call, or name another', async () => {
    await suspended();
    const tools = bankTools([]);
    const missing = await refusal(() => c.chat.resume(state, { approvals: {}, tools }));
    expect(missing.problem).toBe('decisions');
    expect(missing.message).toContain(ids[0]);
    const extra = await refusal(() =>
      c.chat.resume(state, { approvals: { [ids[0] ?? '']: true, call_other: true }, tools }),
    );
    expect(extra.problem).toBe('decisions');
    expect(extra.message).toContain('call_other');
    const wrongKind = await refusal(() => c.chat.resume(state, { toolResults: { [ids[0] ?? '']: 'done' }, tools }));
    expect(wrongKind.problem).toBe('decisions');
  });
});

describe('approvals through stream()', () => {
  it.each(PROTOCOL_NAMES)('%s: approval.requested ends the stream, streamResume continues it', async (protocol) => {
    const { client: c, model } = await client(protocol);
    const ran: string[] = [];
    const stream = protocols[protocol].stream(c, ran);
    const events: ToolLoopEvent[] = [];
    for await (const event of stream) events.push(event);
    const result = await stream.final();
    const tail = events.slice(-3).map((event) => event.type);
    expect(tail).toEqual(['step.finish', 'approval.requested', 'finish']);
    const requested = events.at(-2);
    if (requested?.type !== 'approval.requested') throw new Error('expected approval.requested');
    expect(requested.pending).toEqual(result.pending);
    expect(requested.state).toEqual(result.state);
    expect(events.at(-1)).toMatchObject({ type: 'finish', finishReason: 'tool_calls', status: 'awaiting_approval' });
    if (result.status !== 'awaiting_approval') throw new Error('expected a suspended loop');

    const id = result.pending[0]?.id ?? '';
    const state = JSON.parse(JSON.stringify(result.state));
    const resumed =
      protocol === 'chat'
        ? c.chat.streamResume(state, { approvals: { [id]: true }, tools: bankTools(ran) })
        : protocol === 'responses'
          ? c.responses.streamResume(state, { approvals: { [id]: true }, tools: bankTools(ran) })
          : protocol === 'messages'
            ? c.messages.streamResume(state, { approvals: { [id]: true }, tools: bankTools(ran) })
            : c.gemini.streamResume(state, { approvals: { [id]: true }, tools: bankTools(ran) });
    const after: ToolLoopEvent[] = [];
    for await (const event of resumed) after.push(event);
    const final = await resumed.final();
    expect(after[0]).toMatchObject({ type: 'tool.result', step: 1, id, name: 'transfer', output: { sent: 500, to: 'bob' } });
    expect(after.at(-1)).toMatchObject({ type: 'finish', step: 2, finishReason: 'stop' });
    expect(final).toMatchObject({ status: 'done', text: 'All settled.' });
    expect(ran).toEqual(['balance:alice', 'transfer:500:bob']);
    expect(model.requests).toHaveLength(2);
  });
});

describe('needsApproval as a function of the arguments', () => {
  it('a call it does not hold runs at once, and the loop never suspends', async () => {
    const model = await startMockModel({
      script: [{ toolCalls: [{ name: 'transfer', arguments: { amount: 50, to: 'bob' } }] }, { content: 'Sent.' }],
    });
    models.push(model);
    const c = new Ai4ts({ provider: 'openai-compatible', baseURL: model.baseURL, apiKey: 'test-key', maxRetries: 0 });
    const ran: string[] = [];
    const result = await protocols.chat.create(c, ran);
    expect(result).toMatchObject({ status: 'done', text: 'Sent.', finishReason: 'stop' });
    expect(result.pending).toBeUndefined();
    expect(ran).toEqual(['transfer:50:bob']);
  });
});
