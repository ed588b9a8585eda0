import { PROVIDERS, type ProviderName, resolveProvider, Transport } from '@ai4ts/core';
import { describe, expect, it } from 'vitest';

describe('provider presets', () => {
  it('covers every vendor the SDK promises', () => {
    const names: ProviderName[] = [
      'openai', 'azure', 'deepseek', 'qwen', 'dashscope', 'zhipu', 'moonshot', 'doubao', 'minimax', 'baichuan',
      'hunyuan', 'lingyi', 'ollama', 'vllm', 'openrouter', 'groq', 'xai', 'anthropic', 'gemini', 'openai-compatible',
    ];
    expect(Object.keys(PROVIDERS).sort()).toEqual([...names].sort());
  });

  it('gives each preset its name, an absolute http(s) baseURL or none, and an env var when a key is required', () => {
    for (const [name, preset] of Object.entries(PROVIDERS)) {
      expect(preset.name).toBe(name);
      if (preset.baseURL) expect(new URL(preset.baseURL).protocol).toMatch(/^https?:$/);
      const needsKey = preset.auth !== 'none' && !('apiKeyOptional' in preset && preset.apiKeyOptional);
      if (needsKey) expect(preset.apiKeyEnv.length).toBeGreaterThan(0);
    }
  });

  it('uses each vendor documented endpoint, auth style and env var', () => {
    expect(PROVIDERS.deepseek).toMatchObject({ baseURL: 'https://api.deepseek.com', apiKeyEnv: ['DEEPSEEK_API_KEY'] });
    expect(PROVIDERS.qwen.baseURL).toBe('https://dashscope.aliyuncs.com/compatible-mode/v1');
    expect(PROVIDERS.qwen.apiKeyEnv).toEqual(['DASHSCOPE_API_KEY']);
    expect(PROVIDERS.zhipu.baseURL).toBe('https://open.bigmodel.cn/api/paas/v4');
    expect(PROVIDERS.doubao).toMatchObject({ baseURL: 'https://ark.cn-beijing.volces.com/api/v3', apiKeyEnv: ['ARK_API_KEY'] });
    expect(PROVIDERS.ollama).toMatchObject({ baseURL: 'http://127.0.0.1:11434/v1', auth: 'none' });
    expect(PROVIDERS.vllm).toMatchObject({ baseURL: 'http://127.0.0.1:8000/v1', auth: 'bearer', apiKeyOptional: true });
    expect(PROVIDERS.azure).toMatchObject({ baseURL: '', auth: 'api-key', apiKeyEnv: ['AZURE_OPENAI_API_KEY'] });
    expect(PROVIDERS.azure.query['api-version']).toBeTruthy();
    expect(PROVIDERS.anthropic).toMatchObject({ auth: 'x-api-key', headers: { 'anthropic-version': '2023-06-01' } });
    expect(PROVIDERS['openai-compatible'].apiKeyEnv).toEqual([]);
    expect(PROVIDERS.gemini).toMatchObject({
      baseURL: 'https://generativelanguage.googleapis.com/v1beta',
      auth: 'x-goog-api-key',
      apiKeyEnv: ['GEMINI_API_KEY', 'GOOGLE_API_KEY'],
      protocol: 'gemini',
    });
  });

  it('gemini sends the key as x-goog-api-key, and a log line redacts it', async () => {
    const KEY = 'AIza-secret-key-123';
    const inits: RequestInit[] = [];
    const lines: string[] = [];
    const write = (...args: unknown[]) => lines.push(args.map((arg) => JSON.stringify(arg)).join(' '));
    const transport = new Transport({
      provider: 'gemini',
      apiKey: KEY,
      maxRetries: 0,
      logLevel: 'debug',
      logBodies: true,
      logger: { debug: write, info: write, warn: write, error: write },
      fetch: async (_input, init) => {
        inits.push(init);
        return new Response('{}', { headers: { 'content-type': 'application/json' } });
      },
    });
    await transport.json('/models/gemini-2.5-flash:generateContent', { method: 'POST', body: { contents: [] } });
    const headers = new Headers(inits[0]?.headers);
    expect(headers.get('x-goog-api-key')).toBe(KEY);
    expect(headers.get('authorization')).toBeNull();
    expect(lines.join('\n')).toContain('"x-goog-api-key":"[redacted]"');
    expect(lines.join('\n')).not.toContain(KEY);
  });

  it('resolveProvider returns a copy of a named preset and a given preset as is', () => {
    const copy = resolveProvider('groq');
    expect(copy).toEqual(PROVIDERS.groq);
    copy.quirks.streamOptions = false;
    copy.apiKeyEnv.push('OTHER');
    expect(PROVIDERS.groq.quirks.streamOptions).toBe(true);
    expect(PROVIDERS.groq.apiKeyEnv).toEqual(['GROQ_API_KEY']);

    const custom = { name: 'mine', baseURL: 'http://h/v1', apiKeyEnv: [], auth: 'none' as const, quirks: { streamOptions: false } };
    expect(resolveProvider(custom)).toBe(custom);
    expect(new Transport({ provider: custom }).provider).toBe(custom);
  });

  it('rejects an unknown name, listing the known ones', () => {
    expect(() => resolveProvider('nope' as ProviderName)).toThrow(/Unknown provider "nope".*deepseek/);
    expect(() => resolveProvider('toString' as ProviderName)).toThrow(/Unknown provider/);
  });

  it('defaults to openai', () => {
    expect(new Transport().provider).toEqual(PROVIDERS.openai);
  });
});
