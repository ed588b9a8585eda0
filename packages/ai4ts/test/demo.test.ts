/**
 * The demo (`npm start` = examples/agent.ts) is safe: it runs the scripted model whatever keys the shell holds, and
 * talks to a real provider only with `--live` or `AI4TS_LIVE=1`, saying which and with which model first. Each run
 * is a child process with fetch limited to 127.0.0.1 (fixtures/loopback-fetch.mjs): nothing here reaches the internet.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { agentScript, type MockModel, startMockModel } from '@ai4ts/testing';
import { afterEach, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../..', import.meta.url));
const loopbackOnly = fileURLToPath(new URL('./fixtures/loopback-fetch.mjs', import.meta.url));

/** The demo's environment: the parent's, without its AI4TS_* and key variables, plus `env`. */
function environment(env: Record<string, string>): NodeJS.ProcessEnv {
  const clean = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith('AI4TS_') && !name.endsWith('_API_KEY')),
  );
  return { ...clean, ...env };
}

async function demo(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', '--import', loopbackOnly, 'examples/agent.ts', ...args], {
    cwd: root,
    env: environment(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => {
    stdout += chunk;
  });
  child.stderr.on('data', (chunk) => {
    stderr += chunk;
  });
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, stdout, stderr };
}

const ANSWER = 'The warmer city is Zürich at 21 °C, which is 69.8 °F.';

let model: MockModel | undefined;
afterEach(async () => {
  await model?.close();
  model = undefined;
});

describe('npm start (examples/agent.ts)', { timeout: 60_000 }, () => {
  it('runs the scripted model even with OPENAI_API_KEY set, and prints the tool arguments decoded', async () => {
    const { code, stdout, stderr } = await demo([], { OPENAI_API_KEY: 'sk-demo-must-not-use-this' });
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout.split('\n')[0]).toMatch(/^Scripted model at http:\/\/127\.0\.0\.1:\d+\/v1 \(offline; --live for a real provider\)$/);
    expect(stdout).not.toContain('Live:');
    // The scripted model sends `{"city":"Z\u00fcrich"}` (ASCII JSON); the demo prints what the model meant.
    expect(stdout).toContain('[tool call] get_weather({"city":"Zürich"})');
    expect(stdout).not.toContain('\\u00fc');
    expect(stdout).toContain(ANSWER);
    expect(stdout).not.toContain('sk-demo-must-not-use-this');
  });

  it('--live talks to the provider the environment names, and says which and with which model first', async (context) => {
    // The vllm preset's URL is http://127.0.0.1:8000/v1: a scripted model there stands in for the provider.
    try {
      model = await startMockModel({ script: agentScript, port: 8000, models: ['demo-model'] });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') context.skip('port 8000 is taken');
      throw error;
    }
    for (const [args, env] of [
      [['--live'], {}],
      [[], { AI4TS_LIVE: '1' }],
    ] as const) {
      const { code, stdout, stderr } = await demo([...args], {
        ...env,
        AI4TS_PROVIDER: 'vllm',
        AI4TS_MODEL: 'demo-model',
        VLLM_API_KEY: 'vllm-key',
        OPENAI_API_KEY: 'sk-demo-must-not-use-this',
      });
      expect(stderr).toBe('');
      expect(code).toBe(0);
      expect(stdout.split('\n')[0]).toBe('Live: provider vllm, model demo-model (real requests, billed by the provider)');
      expect(stdout).toContain(ANSWER);
    }
    const posts = model.requests.filter((request) => request.method === 'POST');
    expect(posts).toHaveLength(6);
    for (const request of posts) {
      expect(request.headers.authorization).toBe('Bearer vllm-key');
      expect((request.body as { model?: unknown }).model).toBe('demo-model');
    }

    // A local server's key is optional (the preset says so): --live runs without one, and sends none.
    const keyless = await demo(['--live'], { AI4TS_PROVIDER: 'vllm', AI4TS_MODEL: 'demo-model' });
    expect(keyless.stderr).toBe('');
    expect(keyless.code).toBe(0);
    expect(keyless.stdout).toContain(ANSWER);
    const later = model.requests.filter((request) => request.method === 'POST').slice(6);
    expect(later).toHaveLength(3);
    for (const request of later) expect(request.headers.authorization).toBeUndefined();
  });

  it('--live without the provider’s key says which variable to set, before any request', async () => {
    const { code, stderr } = await demo(['--live'], { AI4TS_PROVIDER: 'deepseek' });
    expect(code).not.toBe(0);
    expect(stderr).toContain('--live needs a key for deepseek: set DEEPSEEK_API_KEY');
  });

  it('a wrong --protocol is one line on stderr and status 2, no stack trace', async () => {
    const { code, stdout, stderr } = await demo(['--protocol=bogus'], {});
    expect(code).toBe(2);
    expect(stderr).toBe('Unknown protocol "bogus": use chat, responses, messages\n');
    expect(stdout).toBe('');
  });
});
