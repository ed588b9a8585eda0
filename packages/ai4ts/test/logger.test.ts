/**
 * The `logger` option and AI4TS_LOG against @ai4ts/testing's scripted model over real HTTP: the exact lines of a
 * request, a retry and a call's outcome; no key ever, no content unless bodies are asked for at debug.
 */
import { type MockModel, type MockTurn, startMockModel } from '@ai4ts/testing';
import { Ai4ts, type Ai4tsOptions, type Logger, resultInfo } from 'ai4ts';
import { afterEach, describe, expect, it, vi } from 'vitest';

const KEY = 'sk-logger-secret-0123456789';
const QUESTION = 'What is the secret recipe?';
const ANSWER = 'Flour, water and patience.';
const usage = { prompt_tokens: 7, completion_tokens: 5, total_tokens: 12 };

type Line = [level: string, message: string, fields: Record<string, unknown> | undefined];

function testLogger(): { logger: Logger; lines: Line[] } {
  const lines: Line[] = [];
  const write = (level: string) => (message: string, fields?: Record<string, unknown>) => {
    lines.push([level, message, fields]);
  };
  return { lines, logger: { debug: write('debug'), info: write('info'), warn: write('warn'), error: write('error') } };
}

let model: MockModel | undefined;
afterEach(async () => {
  await model?.close();
  model = undefined;
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
});

async function start(script: MockTurn[], options: Ai4tsOptions): Promise<Ai4ts> {
  model = await startMockModel({ script });
  return new Ai4ts({ provider: 'openai-compatible', baseURL: model.baseURL, apiKey: KEY, maxRetries: 0, ...options });
}

const request = { model: 'mock-model', messages: [{ role: 'user' as const, content: QUESTION }] };

describe('logger', () => {
  it('logs each request and the call outcome at info, with the request id; no key, no content', async () => {
    const { logger, lines } = testLogger();
    const client = await start([{ content: ANSWER, usage }], { logger });
    const completion = await client.chat.create(request);
    const url = `${model?.baseURL}/chat/completions`;
    expect(lines).toEqual([
      [
        'info',
        'ai4ts: request',
        { method: 'POST', url, model: 'mock-model', status: 200, durationMs: expect.any(Number), retries: 0, requestId: 'req_1' },
      ],
      [
        'info',
        'ai4ts: model call completed',
        {
          protocol: 'chat',
          model: 'mock-model',
          requestId: 'req_1',
          durationMs: expect.any(Number),
          finishReasons: ['stop'],
          usage: { input: 7, output: 5 },
        },
      ],
    ]);
    expect(resultInfo(completion)?.requestId).toBe('req_1');
    const text = JSON.stringify(lines);
    expect(text).not.toContain(KEY);
    expect(text).not.toContain(QUESTION);
    expect(text).not.toContain(ANSWER);
  });

  it('logs a retry as a warning and the attempt that succeeded with its retry count; a failed stream as a warning', async () => {
    const { logger, lines } = testLogger();
    const client = await start(
      [{ httpError: { status: 503 } }, { content: ANSWER, usage }, { content: 'Fl', streamError: { message: 'boom' } }],
      { logger, maxRetries: 1, backoff: { initialMs: 1, maxMs: 1 } },
    );
    await client.messages.stream({ ...request, max_tokens: 32 }).final();
    await expect(client.messages.stream({ ...request, max_tokens: 32 }).final()).rejects.toThrow('boom');
    expect(lines.map(([level, message, fields]) => [level, message, fields?.status, fields?.retries])).toEqual([
      ['warn', 'ai4ts: request will be retried', 503, 0],
      ['info', 'ai4ts: request', 200, 1],
      ['info', 'ai4ts: model call completed', undefined, undefined],
      ['info', 'ai4ts: request', 200, 0],
      ['warn', 'ai4ts: model call failed', undefined, undefined],
    ]);
    expect(lines[4]?.[2]).toMatchObject({ protocol: 'messages', requestId: 'req_3', error: 'ApiError: in-stream error, code api_error' });
    expect(JSON.stringify(lines)).not.toContain(KEY);
  });

  it('a key anywhere in a logged URL is redacted, whatever the level', async () => {
    const { logger, lines } = testLogger();
    const client = await start([{ content: ANSWER }], { logger, logLevel: 'debug', query: { key: KEY } });
    await client.chat.create(request);
    expect(lines[0]?.[2]?.url).toBe(`${model?.baseURL}/chat/completions?key=[redacted]`);
    expect(JSON.stringify(lines)).not.toContain(KEY);
  });

  it('bodies only at debug when asked for: the request body and result, auth headers redacted, never the key', async () => {
    const { logger, lines } = testLogger();
    const client = await start([{ content: ANSWER }], { logger, logLevel: 'debug', logBodies: true });
    await client.chat.stream(request).final();
    const body = lines.find(([, message]) => message === 'ai4ts: request body')?.[2];
    expect(JSON.parse(String(body?.body))).toMatchObject({ model: 'mock-model', messages: request.messages, stream: true });
    expect(body?.headers).toMatchObject({ authorization: '[redacted]' });
    const result = lines.find(([, message]) => message === 'ai4ts: model call result')?.[2];
    expect(JSON.stringify(result)).toContain(ANSWER);
    expect(JSON.stringify(lines)).not.toContain(KEY);

    // Without logBodies, debug logs no body.
    const quiet = testLogger();
    const other = new Ai4ts({
      provider: 'openai-compatible',
      baseURL: model?.baseURL,
      apiKey: KEY,
      maxRetries: 0,
      logger: quiet.logger,
      logLevel: 'debug',
    });
    model?.requests.splice(0);
    await expect(other.chat.create(request)).rejects.toThrow(); // the script has no second turn
    expect(JSON.stringify(quiet.lines)).not.toContain(QUESTION);
  });

  it('Gemini at debug with bodies: its x-goog-api-key header redacted, the model in the URL, never the key', async () => {
    const { logger, lines } = testLogger();
    model = await startMockModel({ script: [{ content: ANSWER, usage }] });
    const client = new Ai4ts({ provider: 'gemini', baseURL: model.geminiBaseURL, apiKey: KEY, maxRetries: 0, logger, logLevel: 'debug', logBodies: true });
    const contents = [{ role: 'user' as const, parts: [{ text: QUESTION }] }];
    await client.gemini.stream({ model: 'mock-model', contents }).final();
    const body = lines.find(([, message]) => message === 'ai4ts: request body')?.[2];
    expect(body?.headers).toMatchObject({ 'x-goog-api-key': '[redacted]' });
    expect(JSON.parse(String(body?.body))).toEqual({ contents });
    const request = lines.find(([, message]) => message === 'ai4ts: request')?.[2];
    expect(request?.url).toBe(`${model.geminiBaseURL}/models/mock-model:streamGenerateContent?alt=sse`);
    expect(lines.find(([, message]) => message === 'ai4ts: model call completed')?.[2]).toMatchObject({
      protocol: 'gemini',
      model: 'mock-model',
      finishReasons: ['stop'],
      usage: { input: 7, output: 5 },
    });
    expect(JSON.stringify(lines)).toContain(ANSWER);
    expect(JSON.stringify(lines)).not.toContain(KEY);
  });

  it('AI4TS_LOG sets the level and logs to the console when no logger is given; off and unknown values', async () => {
    const info = vi.spyOn(console, 'info').mockImplementation(() => undefined);
    vi.stubEnv('AI4TS_LOG', 'info');
    const client = await start([{ content: ANSWER }, { content: ANSWER }], {});
    await client.chat.create(request);
    expect(info.mock.calls.map(([message]) => message)).toEqual(['ai4ts: request', 'ai4ts: model call completed']);

    vi.stubEnv('AI4TS_LOG', 'warn');
    const { logger, lines } = testLogger();
    await new Ai4ts({ provider: 'openai-compatible', baseURL: model?.baseURL, apiKey: KEY, logger }).chat.create(request);
    expect(lines).toEqual([]);

    vi.stubEnv('AI4TS_LOG', 'verbose');
    expect(() => new Ai4ts({ provider: 'openai-compatible', baseURL: model?.baseURL })).toThrow(
      'AI4TS_LOG must be one of debug, info, warn, error, off, not "verbose"',
    );
  });

  it('a logger that throws does not break the request', async () => {
    const broken: Logger = {
      debug: () => undefined,
      info: () => {
        throw new Error('disk full');
      },
      warn: () => undefined,
      error: () => undefined,
    };
    const client = await start([{ content: ANSWER }], { logger: broken });
    const completion = await client.chat.create(request);
    expect(completion.choices[0]?.message.content).toBe(ANSWER);
  });

  it('an HTTP error: the model call failed line carries the request id the request failed line had', async () => {
    const { logger, lines } = testLogger();
    const client = await start([{ httpError: { status: 401 } }], { logger });
    await expect(client.chat.create(request)).rejects.toMatchObject({ status: 401 });
    const failed = lines.filter(([, message]) => message.endsWith('failed')).map(([, message, fields]) => [message, fields?.requestId]);
    expect(failed).toEqual([
      ['ai4ts: request failed', 'req_1'],
      ['ai4ts: model call failed', 'req_1'],
    ]);
  });
});
