/**
 * Issue 27's done-criteria with real processes: two `ai4ts-gateway` CLI processes on one real redis-server
 * (`--keys redis://...`, `--admin-token-env`, `--metrics`, `--access-log`) in front of one scripted model, called by
 * the official `openai` (Chat Completions, `Authorization: Bearer`) and `@anthropic-ai/sdk` (Messages, `x-api-key`)
 * clients. A key's RPM, TPM and budget hold across both processes; a key revoked on one is refused by the other at
 * once; /metrics and the access log of each count what that process answered, by key name; no key is in any of them.
 *
 * Every answer a client gets goes through {@link recording}: the ledger of what each process answered, as it came off
 * the wire, which the metrics and the access logs are checked against.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import Anthropic, { AuthenticationError as AnthropicAuthenticationError, RateLimitError as AnthropicRateLimitError } from '@anthropic-ai/sdk';
import { startMockModel, type MockModel } from '@ai4ts/testing';
import { sleep } from '@ai4ts/test-kit';
import OpenAI, { AuthenticationError, RateLimitError } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashKey } from '../src/keys/key.js';
import { type Family, parsePrometheusText, total } from './prometheus-text.js';
import { freePort, startRedis, stop } from './redis-server.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const ADMIN_TOKEN = 'admin-token-5d1e9a7c3b';
const UPSTREAM_TOKEN = 'sk-upstream-secret-8f3a61c0';
const METRICS_TOKEN = 'metrics-token-27c4e0b9aa';
/** What the scripted model reports for every call, whichever protocol the client spoke. */
const USAGE = { prompt_tokens: 40, completion_tokens: 60, total_tokens: 100 };
const MAX_TOKENS = 100;

type Protocol = 'chat' | 'messages';

/** One answer a process gave a client, as it came off the wire. */
interface Answer {
  process: number;
  keyName: string;
  protocol: Protocol;
  status: number;
  headers: Headers;
  body: Promise<string>;
}

/** One gateway process: its URL and everything it wrote on stderr (its access log). */
interface Instance {
  child: ChildProcess;
  url: string;
  stderr: () => string;
}

const answers: Answer[] = [];
/** Every key the admin API issued: none may show anywhere but in its create answer. */
const issued: string[] = [];
/** The bodies of admin answers other than a create's, scanned for keys too. */
const adminBodies: string[] = [];

let redis: ChildProcess | undefined;
let model: MockModel | undefined;
let instances: Instance[] = [];
/** Every gateway process spawned, stopped after the tests even when another failed to start. */
const children: ChildProcess[] = [];

/** `ai4ts-gateway` as an operator runs it, one node process (tsx as its loader), resolved once it listens. */
async function startInstance(redisUrl: string, upstream: string): Promise<Instance> {
  const args = ['--upstream', upstream, '--upstream-protocol', 'chat', '--port', '0', '--keys', redisUrl, '--admin-token-env', 'OPS_ADMIN_TOKEN'];
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'packages/gateway/src/cli.ts', ...args, '--metrics', '--access-log', '--shutdown-timeout', '1000'],
    {
      cwd: ROOT,
      env: { ...process.env, OPS_ADMIN_TOKEN: ADMIN_TOKEN, AI4TS_UPSTREAM_TOKEN: UPSTREAM_TOKEN, AI4TS_METRICS_TOKEN: METRICS_TOKEN },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  children.push(child);
  let stderr = '';
  child.stderr?.on('data', (chunk) => {
    stderr += chunk;
  });
  let stdout = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout?.on('data', (chunk) => {
      stdout += chunk;
      const listening = /listening on (\S+)\n/.exec(stdout)?.[1];
      if (listening) resolve(listening);
    });
    child.once('exit', (code) => reject(new Error(`the gateway exited (${code}) before listening: ${stderr}`)));
  });
  return { child, url, stderr: () => stderr };
}

beforeAll(async () => {
  const port = await freePort();
  redis = await startRedis(port);
  model = await startMockModel({ script: () => ({ content: 'Hello there', usage: USAGE }) });
  const upstream = model.baseURL;
  instances = await Promise.all([0, 1].map(() => startInstance(`redis://127.0.0.1:${port}`, upstream)));
}, 30_000);

afterAll(async () => {
  // SIGTERM: each gateway shuts down gracefully and exits 0.
  const codes = await Promise.all(
    children.map(async (child) => {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      const [code] = await exited;
      return code;
    }),
  );
  await model?.close();
  await stop(redis);
  expect(codes).toEqual(children.map(() => 0));
}, 15_000);

/** A fetch that records each answer in the ledger before the client reads it (a stream's body as it is read). */
function recording(at: number, keyName: string, protocol: Protocol): typeof fetch {
  return async (input, init) => {
    const response = await fetch(input, init);
    answers.push({ process: at, keyName, protocol, status: response.status, headers: response.headers, body: response.clone().text() });
    return response;
  };
}

/** The official clients of a key on each process: a Chat Completions one (Bearer) and a Messages one (x-api-key). */
function clientsOf(key: string, keyName: string) {
  return instances.map(({ url }, at) => ({
    openai: new OpenAI({ baseURL: `${url}/v1`, apiKey: key, maxRetries: 0, fetch: recording(at, keyName, 'chat') }),
    anthropic: new Anthropic({ baseURL: url, apiKey: key, maxRetries: 0, fetch: recording(at, keyName, 'messages') }),
  }));
}

type Clients = ReturnType<typeof clientsOf>[number];

/** One call through a client (Chat Completions unstreamed, Messages either way): what it returned. */
async function call(clients: Clients, protocol: Protocol, options: { model?: string; stream?: boolean } = {}): Promise<unknown> {
  const messages = [{ role: 'user' as const, content: 'hi' }];
  if (protocol === 'chat')
    return clients.openai.chat.completions.create({ model: options.model ?? 'gpt-4o-mini', messages, max_tokens: MAX_TOKENS });
  const model = options.model ?? 'claude-haiku-4-5';
  if (!options.stream) return clients.anthropic.messages.create({ model, messages, max_tokens: MAX_TOKENS });
  const events = [];
  for await (const event of await clients.anthropic.messages.create({ model, messages, max_tokens: MAX_TOKENS, stream: true }))
    events.push(event);
  return events;
}

/** The same call, the error the client threw (its reading of a refusal) taken as its outcome. */
function settle(clients: Clients, protocol: Protocol, options: { model?: string; stream?: boolean } = {}): Promise<unknown> {
  return call(clients, protocol, options).catch((error: unknown) => error);
}

async function admin(instance: Instance, path: string, init: RequestInit = {}): Promise<Response> {
  return fetch(`${instance.url}/admin/keys${path}`, {
    ...init,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
  });
}

/** A key made through one instance's admin API. */
async function createKey(instance: Instance, settings: Record<string, unknown>): Promise<{ key: string; id: string }> {
  const response = await admin(instance, '', { method: 'POST', body: JSON.stringify(settings) });
  expect(response.status).toBe(201);
  const created = (await response.json()) as { key: string; id: string };
  issued.push(created.key);
  return created;
}

async function spendOn(instance: Instance, id: string): Promise<Record<string, unknown>> {
  const response = await admin(instance, `/${id}/spend`);
  const text = await response.text();
  adminBodies.push(text);
  expect(response.status).toBe(200);
  return JSON.parse(text) as Record<string, unknown>;
}

function answersOf(keyName: string): Answer[] {
  return answers.filter((answer) => answer.keyName === keyName);
}

/** The rate window is the clock's minute: a burst that straddles its end would count in two windows. */
async function clearOfTheMinuteEnd(): Promise<void> {
  const intoMinute = Date.now() % 60_000;
  if (intoMinute > 50_000) await sleep(60_000 - intoMinute + 100);
}

/** The headers every 429 of a key's limits carries: Retry-After, and OpenAI's rate-limit headers for its limits. */
function expectRateLimitHeaders(headers: Headers, limits: { rpm: number; tpm: number }): void {
  const retryAfter = Number(headers.get('retry-after'));
  expect(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60).toBe(true);
  expect(headers.get('x-ratelimit-limit-requests')).toBe(String(limits.rpm));
  expect(headers.get('x-ratelimit-limit-tokens')).toBe(String(limits.tpm));
  expect(headers.get('x-ratelimit-remaining-requests')).toMatch(/^\d+$/);
  expect(headers.get('x-ratelimit-remaining-tokens')).toMatch(/^\d+$/);
  expect(headers.get('x-ratelimit-reset-requests')).toMatch(/^\d+s$/);
  expect(headers.get('x-ratelimit-reset-tokens')).toMatch(/^\d+s$/);
}

/** A 429's body in its inbound protocol's shape: OpenAI's error object, or Anthropic's `{type: 'error', error}`. */
async function expectRateLimitBody(answer: Answer, message: string): Promise<void> {
  const body: unknown = JSON.parse(await answer.body);
  if (answer.protocol === 'chat')
    expect(body).toEqual({ error: { type: 'rate_limit_error', code: 'rate_limit_exceeded', param: null, message: expect.stringContaining(message) } });
  else
    expect(body).toEqual({
      type: 'error',
      error: { type: 'rate_limit_error', code: 'rate_limit_exceeded', message: expect.stringContaining(message) },
    });
}

/** The client's own reading of a 429: its RateLimitError. */
function expectRateLimitError(outcome: unknown, protocol: Protocol): void {
  if (protocol === 'chat') {
    expect(outcome).toBeInstanceOf(RateLimitError);
    expect(outcome instanceof RateLimitError && outcome.code).toBe('rate_limit_exceeded');
  } else {
    expect(outcome).toBeInstanceOf(AnthropicRateLimitError);
    expect(outcome instanceof AnthropicRateLimitError && outcome.type).toBe('rate_limit_error');
  }
}

// Up to 10 s waiting out the end of a minute, then the bursts: the whole file stays under 30 s.
describe('two gateway processes on one redis-server', { timeout: 25_000 }, () => {
  it('share a key’s RPM and TPM under concurrent load: the totals admitted never pass them', async () => {
    const [a] = instances as [Instance, Instance];
    const rpmLimits = { rpm: 6, tpm: 100_000 };
    const tpmLimits = { rpm: 1000, tpm: 600 };
    const rpmKey = await createKey(a, { name: 'rpm-shared', ...rpmLimits });
    const tpmKey = await createKey(a, { name: 'tpm-shared', ...tpmLimits });
    /** 20 calls at once: five on each process in each protocol. */
    const burst = (clients: Clients[]) =>
      Promise.all(
        Array.from({ length: 20 }, (_, i) => {
          const protocol: Protocol = i % 4 < 2 ? 'chat' : 'messages';
          const on = clients[i % 2] as Clients;
          return settle(on, protocol).then((outcome) => ({ protocol, outcome }));
        }),
      );
    await clearOfTheMinuteEnd();
    const [rpmOutcomes, tpmOutcomes] = await Promise.all([burst(clientsOf(rpmKey.key, 'rpm-shared')), burst(clientsOf(tpmKey.key, 'tpm-shared'))]);

    // RPM: exactly the limit admitted, each seeing its own count of the shared window (the Lua script's atomicity).
    const rpm = answersOf('rpm-shared');
    expect(rpm).toHaveLength(20);
    const rpmAdmitted = rpm.filter((answer) => answer.status === 200);
    expect(rpmAdmitted).toHaveLength(rpmLimits.rpm);
    expect(rpmAdmitted.map((answer) => answer.headers.get('x-ratelimit-remaining-requests')).sort()).toEqual(['0', '1', '2', '3', '4', '5']);
    const rpmRefused = rpm.filter((answer) => answer.status !== 200);
    // Ten calls of each protocol and on each process, six admitted: each has at least four refusals.
    for (const protocol of ['chat', 'messages'] as const)
      expect(rpmRefused.filter((answer) => answer.protocol === protocol).length).toBeGreaterThanOrEqual(4);
    for (const answer of rpmRefused) {
      expect(answer.status).toBe(429);
      expectRateLimitHeaders(answer.headers, rpmLimits);
      expect(answer.headers.get('x-ratelimit-remaining-requests')).toBe('0');
      await expectRateLimitBody(answer, 'over its limit of 6 requests per minute');
    }
    for (const { protocol, outcome } of rpmOutcomes) if (outcome instanceof Error) expectRateLimitError(outcome, protocol);
    expect(rpmOutcomes.filter(({ outcome }) => !(outcome instanceof Error))).toHaveLength(rpmLimits.rpm);

    // TPM: each call reserves its input estimate (body / 4) and its max_tokens (100), and uses 100 tokens: what both
    // processes admitted used no more than the limit.
    const tpm = answersOf('tpm-shared');
    expect(tpm).toHaveLength(20);
    const tpmAdmitted = tpm.filter((answer) => answer.status === 200).length;
    expect(tpmAdmitted).toBeGreaterThan(0);
    expect(tpmAdmitted * USAGE.total_tokens).toBeLessThanOrEqual(tpmLimits.tpm);
    const tpmRefused = tpm.filter((answer) => answer.status !== 200);
    for (const protocol of ['chat', 'messages'] as const)
      expect(tpmRefused.filter((answer) => answer.protocol === protocol).length).toBeGreaterThanOrEqual(4);
    for (const answer of tpmRefused) {
      expect(answer.status).toBe(429);
      expectRateLimitHeaders(answer.headers, tpmLimits);
      // Refused: what was counted plus this call's reservation passed the limit, so something was counted.
      expect(Number(answer.headers.get('x-ratelimit-remaining-tokens'))).toBeLessThan(tpmLimits.tpm);
      await expectRateLimitBody(answer, 'over its limit of 600 tokens per minute');
    }
    for (const { protocol, outcome } of tpmOutcomes) if (outcome instanceof Error) expectRateLimitError(outcome, protocol);
  });

  it('share a budget: the spend read on either is the same, and the next call on either is refused naming its reset', async () => {
    const [a, b] = instances as [Instance, Instance];
    const budget = 0.01;
    const { key, id } = await createKey(b, { name: 'budget-shared', budget: { usd: budget, period: 'day' } });
    const clients = clientsOf(key, 'budget-shared');
    // gpt-4o on A (non-streamed): 40 * 2.5 + 60 * 10 = 700 micro-dollars a call; claude-haiku-4-5 on B (streamed):
    // 40 * 1 + 60 * 5 = 340. Each reserves its estimate (its input by body / 4, 100 output tokens) at admission.
    const plan = [
      { process: 0, protocol: 'chat', model: 'gpt-4o', usd: 700e-6 },
      { process: 1, protocol: 'messages', model: 'claude-haiku-4-5', stream: true, usd: 340e-6 },
    ] as const;
    let spent = 0;
    let refusal: { step: (typeof plan)[number]; outcome: unknown } | undefined;
    for (let i = 0; i < 30 && !refusal; i++) {
      const step = plan[i % 2] as (typeof plan)[number];
      const outcome = await settle(clients[step.process] as Clients, step.protocol, step);
      if (outcome instanceof Error) refusal = { step, outcome };
      else {
        spent += step.usd;
        // Settled through one process, read back through the other.
        const other = instances[1 - step.process] as Instance;
        await expect.poll(async () => (await spendOn(other, id)).spentUsd).toBeCloseTo(spent, 6);
      }
    }
    if (!refusal) throw new Error('the budget never refused a call');
    expect(spent).toBeGreaterThan(budget / 2);
    expect(spent).toBeLessThanOrEqual(budget);
    const [fromA, fromB] = [await spendOn(a, id), await spendOn(b, id)];
    expect(fromA).toEqual(fromB);
    expect(fromA).toMatchObject({ name: 'budget-shared', budgetUsd: budget, period: 'day' });
    const resetsAt = String(fromA.resetsAt);

    // The same call on the other process is refused too: nothing was spent in between.
    const { step } = refusal;
    const again = await settle(clients[1 - step.process] as Clients, step.protocol, step);
    const refusals = answersOf('budget-shared').filter((answer) => answer.status !== 200);
    expect(refusals.map((answer) => [answer.process, answer.protocol])).toEqual([
      [step.process, step.protocol],
      [1 - step.process, step.protocol],
    ]);
    const message = `The virtual key budget-shared has spent $${spent.toFixed(4)} of its budget of $0.01 per day; the budget resets at ${resetsAt}`;
    for (const [answer, outcome] of [
      [refusals[0], refusal.outcome],
      [refusals[1], again],
    ] as const) {
      if (!answer) throw new Error('no refusal recorded');
      expect(answer.status).toBe(429);
      // Come back at the reset, not in a minute: computed before now, it is at least the seconds left from now.
      const retryAfter = Number(answer.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThanOrEqual(Math.floor((Date.parse(resetsAt) - Date.now()) / 1000));
      expect(retryAfter).toBeLessThanOrEqual(86_400);
      const body: unknown = JSON.parse(await answer.body);
      if (answer.protocol === 'chat') {
        expect(body).toEqual({ error: { type: 'insufficient_quota', code: 'budget_exceeded', param: null, message } });
        expect(outcome).toBeInstanceOf(RateLimitError);
      } else {
        expect(body).toEqual({ type: 'error', error: { type: 'rate_limit_error', code: 'budget_exceeded', message } });
        expect(outcome).toBeInstanceOf(AnthropicRateLimitError);
      }
    }
  });

  it('a key revoked on B is refused on A at once', async () => {
    const [a, b] = instances as [Instance, Instance];
    const { key, id } = await createKey(a, { name: 'revoked-shared' });
    const [onA, onB] = clientsOf(key, 'revoked-shared') as [Clients, Clients];
    expect(await settle(onA, 'chat')).not.toBeInstanceOf(Error);
    expect(await settle(onA, 'messages')).not.toBeInstanceOf(Error);
    const revoked = await admin(b, `/${id}`, { method: 'DELETE' });
    expect(revoked.status).toBe(200);
    adminBodies.push(await revoked.text());
    // No wait: the very next calls on A, in both protocols, and on B.
    const chat = await settle(onA, 'chat');
    expect(chat).toBeInstanceOf(AuthenticationError);
    expect(chat instanceof AuthenticationError && chat.code).toBe('invalid_api_key');
    const messages = await settle(onA, 'messages');
    expect(messages).toBeInstanceOf(AnthropicAuthenticationError);
    expect(messages instanceof AnthropicAuthenticationError && messages.type).toBe('authentication_error');
    expect(await settle(onB, 'chat')).toBeInstanceOf(AuthenticationError);
    const refused = answersOf('revoked-shared').filter((answer) => answer.status !== 200);
    expect(refused.map((answer) => [answer.process, answer.status])).toEqual([
      [0, 401],
      [0, 401],
      [1, 401],
    ]);
    for (const answer of refused) expect(await answer.body).toContain('The virtual key revoked-shared was revoked');
  });

  it('/metrics and the access log of each process count what it answered by key name; no key shows anywhere', async () => {
    // Traffic of its own (so that it stands alone), on top of whatever the tests before sent.
    const { key } = await createKey(instances[0] as Instance, { name: 'metrics-shared', rpm: 3 });
    const [onA, onB] = clientsOf(key, 'metrics-shared') as [Clients, Clients];
    await clearOfTheMinuteEnd();
    for (const [clients, protocol] of [
      [onA, 'chat'],
      [onB, 'messages'],
      [onB, 'chat'],
      [onA, 'messages'],
      [onA, 'chat'],
    ] as const)
      await settle(clients, protocol, { stream: protocol === 'messages' });
    expect(answersOf('metrics-shared').map((answer) => answer.status)).toEqual([200, 200, 200, 429, 429]);

    const keyNames = [...new Set(answers.map((answer) => answer.keyName))];
    /** What a process answered of a key's calls, as the client saw it; a revoked key's 401s are nobody's. */
    const answeredBy = (at: number, keyName: string, filter: (answer: Answer) => boolean = () => true) =>
      answers.filter((answer) => answer.process === at && answer.keyName === keyName && answer.status !== 401 && filter(answer)).length;
    const unauthorizedBy = (at: number) => answers.filter((answer) => answer.process === at && answer.status === 401).length;

    const scrapes: string[] = [];
    for (const [at, instance] of instances.entries()) {
      const scrape = async () => {
        const response = await fetch(`${instance.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
        expect(response.status).toBe(200);
        const text = await response.text();
        return { text, families: parsePrometheusText(text) };
      };
      const keyed = (families: Map<string, Family>) =>
        keyNames.reduce((sum, keyName) => sum + total(families, 'ai4ts_gateway_requests_total', { key: keyName }), 0);
      // A stream's request is counted when its last event went out, a moment after the client read it.
      const expected = keyNames.reduce((sum, keyName) => sum + answeredBy(at, keyName), 0);
      await expect.poll(async () => keyed((await scrape()).families)).toBe(expected);
      const { text, families } = await scrape();
      scrapes.push(text);
      for (const keyName of keyNames) {
        const ok = answeredBy(at, keyName, (answer) => answer.status === 200);
        const limited = answeredBy(at, keyName, (answer) => answer.status === 429);
        const labels = { key: keyName };
        expect(total(families, 'ai4ts_gateway_requests_total', { ...labels, status: '200', result: 'ok' })).toBe(ok);
        expect(total(families, 'ai4ts_gateway_requests_total', { ...labels, status: '429', result: 'error' })).toBe(limited);
        expect(total(families, 'ai4ts_gateway_rate_limit_rejections_total', labels)).toBe(limited);
        expect(total(families, 'ai4ts_gateway_tokens_total', { ...labels, type: 'input' })).toBe(ok * USAGE.prompt_tokens);
        expect(total(families, 'ai4ts_gateway_tokens_total', { ...labels, type: 'output' })).toBe(ok * USAGE.completion_tokens);
      }
      // The revoked key's 401s carry no key name: the request never got past the door.
      expect(total(families, 'ai4ts_gateway_requests_total', { status: '401' })).toBe(unauthorizedBy(at));
    }

    // The access log says the same: one line per answer, with the key's name.
    for (const [at, instance] of instances.entries()) {
      const entries = () =>
        instance
          .stderr()
          .split('\n')
          .filter((line) => line.startsWith('{'))
          .map((line) => JSON.parse(line) as { keyName?: string; status: number; path: string });
      const expected = keyNames.reduce((sum, keyName) => sum + answeredBy(at, keyName), 0);
      await expect.poll(() => entries().filter((entry) => entry.keyName !== undefined).length).toBe(expected);
      for (const keyName of keyNames)
        for (const status of [200, 429])
          expect(entries().filter((entry) => entry.keyName === keyName && entry.status === status).length).toBe(
            answeredBy(at, keyName, (answer) => answer.status === status),
          );
    }

    // What each key was charged (its spend, read through either process) is the cost both processes' metrics counted.
    const listed = await admin(instances[1] as Instance, '');
    const listedText = await listed.text();
    adminBodies.push(listedText);
    for (const record of (JSON.parse(listedText) as { data: Array<{ id: string; name: string }> }).data) {
      const cost = scrapes.reduce((sum, text) => sum + total(parsePrometheusText(text), 'ai4ts_gateway_cost_usd_total', { key: record.name }), 0);
      expect(cost).toBeCloseTo(Number((await spendOn(instances[0] as Instance, record.id)).spentUsd), 6);
    }

    // No key, nor its hash, nor a token, in any metric, access-log line, answer or admin answer but a key's creation.
    const bodies = await Promise.all(answers.map((answer) => answer.body));
    const headers = answers.map((answer) => JSON.stringify([...answer.headers]));
    const seen = [...scrapes, ...instances.map((instance) => instance.stderr()), ...bodies, ...headers, ...adminBodies];
    const secrets = [...issued, ...(await Promise.all(issued.map(hashKey))), ADMIN_TOKEN, UPSTREAM_TOKEN, METRICS_TOKEN];
    for (const text of seen) for (const secret of secrets) expect(text).not.toContain(secret);
    // ... and every line on stderr is an access-log entry: no warning or stack trace came out.
    for (const instance of instances) for (const line of instance.stderr().split('\n').filter(Boolean)) expect(line.startsWith('{')).toBe(true);
  });
});
