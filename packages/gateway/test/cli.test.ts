/** The `ai4ts-proxy` CLI, spawned as a user runs it (through tsx, from the sources). */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PROVIDERS } from '@ai4ts/core';
import { sendSse, startSse } from '@ai4ts/test-kit';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { TYPED_ANSWER } from '../../bridge/test/helpers.js';
import { type Daemon, readChunks, startDaemon } from './helpers.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const children: ChildProcess[] = [];
let daemon: Daemon | undefined;

afterEach(async () => {
  for (const child of children.splice(0)) {
    if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) {
      const exited = once(child, 'exit');
      process.kill(-child.pid, 'SIGTERM'); // the whole group: npx, tsx and the node running the CLI
      await exited;
    }
  }
  await daemon?.close();
  daemon = undefined;
});

function run(args: string[], env: Record<string, string> = {}): ChildProcess {
  const child = spawn('npx', ['tsx', 'packages/gateway/src/cli.ts', ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true, // its own process group, so that cleanup reaches the CLI behind npx and tsx
  });
  children.push(child);
  return child;
}

/** A streaming chat request with a bearer token. */
function ask(url: string, token: string, message = 'hi'): Promise<Response> {
  return fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
    body: JSON.stringify({ model: 'daemon', messages: [{ role: 'user', content: message }], stream: true }),
  });
}

/** The first line the child prints on stdout. */
async function firstLine(child: ChildProcess): Promise<string> {
  let text = '';
  for await (const chunk of child.stdout ?? []) {
    text += chunk;
    const end = text.indexOf('\n');
    if (end >= 0) return text.slice(0, end);
  }
  throw new Error('The CLI exited without printing a line');
}

/** Runs the CLI to its end: the exit status and everything it printed. */
async function finish(child: ChildProcess): Promise<{ code: number | null; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk) => {
    stdout += chunk;
  });
  child.stderr?.on('data', (chunk) => {
    stderr += chunk;
  });
  const [code] = await once(child, 'exit');
  return { code, stdout, stderr };
}

describe('ai4ts-proxy', { timeout: 30_000 }, () => {
  it('--help exits 0 and lists every flag and the environment variables', async () => {
    for (const flag of ['--help', '-h']) {
      const { code, stdout, stderr } = await finish(run([flag]));
      expect(code).toBe(0);
      expect(stderr).toBe('');
      expect(stdout).toContain('Usage: ai4ts-gateway');
      for (const option of [
        '--upstream URL',
        '--dialect typed|named',
        '--upstream-protocol chat|responses|messages',
        '--provider NAME',
        '--upstream-model M',
        '--on-unsupported drop|refuse',
        '--routes FILE',
        '--resumable',
        '--access-log',
        '--telemetry',
        '--telemetry-content',
        '--port N',
        '--host H',
        '--auth-token T',
        '--upstream-token U',
        '--proxy-token-file F',
        '--upstream-token-file F',
        '--max-concurrent-streams N',
        '--upstream-headers-timeout MS',
        '--first-event-timeout MS',
        '--idle-timeout MS',
        '--headers-timeout MS',
        '--request-timeout MS',
        '--keep-alive-timeout MS',
        'AI4TS_PROXY_TOKEN',
        'AI4TS_UPSTREAM_TOKEN',
        'WARNING: other local users see it',
        '--help',
        '--version',
      ])
        expect(stdout).toContain(option);
      expect(stdout).toContain('Environment variables:');
    }
  });

  it('--help names every option the parser takes and every key variable a preset reads', async () => {
    // The option table of cli.ts's parseArgs call, read from its source: a flag added there must reach the help.
    const source = readFileSync(new URL('../src/cli.ts', import.meta.url), 'utf8');
    const table = source.slice(source.indexOf('parseArgs({'), source.indexOf('}).values'));
    const options = [...table.matchAll(/^\s+'?([a-z][a-z-]*)'?: \{ type: '(?:string|boolean)'/gm)].map((match) => match[1]);
    expect(options.length).toBeGreaterThan(25);
    const { code, stdout } = await finish(run(['--help']));
    expect(code).toBe(0);
    for (const option of options) expect(stdout).toMatch(new RegExp(`--${option}(?![a-z-])`));
    for (const preset of Object.values(PROVIDERS)) for (const variable of preset.apiKeyEnv) expect(stdout).toContain(variable);
  });

  it('--help wins over missing or bad arguments', async () => {
    const { code, stdout } = await finish(run(['--dialect', 'sse-of-my-own', '--help']));
    expect(code).toBe(0);
    expect(stdout).toContain('Usage: ai4ts-gateway');
  });

  it("--version prints the package's version and exits 0", async () => {
    const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
      version: string;
    };
    for (const flag of ['--version', '-v']) {
      const { code, stdout } = await finish(run([flag]));
      expect(code).toBe(0);
      expect(stdout).toBe(`${version}\n`);
    }
  });

  it('--telemetry traces through the OTel setup the operator --imports, under the caller’s traceparent', async () => {
    daemon = await startDaemon((res) => sendSse(res, TYPED_ANSWER));
    const dir = mkdtempSync(join(tmpdir(), 'ai4ts-otel-'));
    const spansFile = join(dir, 'spans.jsonl');
    writeFileSync(spansFile, '');
    try {
      const setup = fileURLToPath(new URL('./fixtures/otel-setup.mjs', import.meta.url));
      const child = run(['--upstream', daemon.url, '--dialect', 'typed', '--port', '0', '--telemetry'], {
        NODE_OPTIONS: `--import=${setup}`,
        SPANS_FILE: spansFile,
        AI4TS_UPSTREAM_TOKEN: 'sk-daemon-secret',
      });
      const url = (await firstLine(child)).replace('listening on ', '');
      const response = await fetch(`${url}/v1/chat/completions`, {
        method: 'POST',
        headers: { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' },
        body: JSON.stringify({ model: 'daemon', messages: [{ role: 'user', content: 'hi' }] }),
      });
      expect(response.status).toBe(200);
      const spans = await vi.waitFor(
        () => {
          const lines = readFileSync(spansFile, 'utf8').trim().split('\n').filter(Boolean);
          expect(lines).toHaveLength(2);
          return lines.map((line) => JSON.parse(line) as { name: string; traceId: string; spanId: string; parent?: string });
        },
        { timeout: 10_000 },
      );
      const [upstream, server] = spans;
      expect([upstream?.name, server?.name]).toEqual(['chat daemon', 'POST /v1/chat/completions']);
      expect(server).toMatchObject({ traceId: '0af7651916cd43dd8448eb211c80319c', parent: 'b7ad6b7169203331' });
      expect(upstream).toMatchObject({ traceId: '0af7651916cd43dd8448eb211c80319c', parent: server?.spanId });
      expect(readFileSync(spansFile, 'utf8')).not.toContain('sk-daemon-secret');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('listens on 127.0.0.1 with --port 0, prints the URL first, and proxies with both tokens kept apart', async () => {
    daemon = await startDaemon((res) => sendSse(res, TYPED_ANSWER));
    const child = run([
      '--upstream',
      daemon.url,
      '--dialect',
      'typed',
      '--port',
      '0',
      '--auth-token',
      'cli-key',
      '--upstream-token',
      'up-key',
    ]);
    let stderr = '';
    child.stderr?.on('data', (chunk) => {
      stderr += chunk;
    });
    const line = await firstLine(child);
    expect(line).toMatch(/^listening on http:\/\/127\.0\.0\.1:\d+$/);
    const url = line.slice('listening on '.length);
    expect(url.endsWith(':0')).toBe(false);

    expect((await fetch(`${url}/v1/models`)).status).toBe(401);
    const response = await fetch(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: 'Bearer cli-key' },
      body: JSON.stringify({ model: 'daemon', messages: [{ role: 'user', content: 'hi' }], stream: true }),
    });
    const { done, text } = readChunks(await response.text());
    expect(done).toBe(true);
    expect(text).toBe('It is 18C in Paris.');
    expect(daemon.requests[0]?.headers.authorization).toBe('Bearer up-key');
    // The flags work, with a warning that names neither token.
    expect(stderr).toContain('warning: --auth-token shows the token to every local user (ps)');
    expect(stderr).toContain('warning: --upstream-token shows the token to every local user (ps)');
    expect(stderr).not.toContain('cli-key');
    expect(stderr).not.toContain('up-key');
  });

  it('takes both tokens from the environment, without a warning', async () => {
    daemon = await startDaemon((res) => sendSse(res, TYPED_ANSWER));
    const child = run(['--upstream', daemon.url, '--dialect', 'typed', '--port', '0'], {
      AI4TS_PROXY_TOKEN: 'env-client-token',
      AI4TS_UPSTREAM_TOKEN: 'env-upstream-token',
    });
    let stderr = '';
    child.stderr?.on('data', (chunk) => {
      stderr += chunk;
    });
    const url = (await firstLine(child)).slice('listening on '.length);
    expect((await ask(url, 'wrong')).status).toBe(401);
    const response = await ask(url, 'env-client-token');
    expect(readChunks(await response.text()).text).toBe('It is 18C in Paris.');
    expect(daemon.requests[0]?.headers.authorization).toBe('Bearer env-upstream-token');
    expect(stderr).toBe('');
  });

  it('takes both tokens from files (over the environment), and the timeout and stream flags', async () => {
    daemon = await startDaemon((res, request) => {
      const { message } = request.body as { message: string };
      if (message === 'stall') {
        startSse(res); // then no event: the first-event timeout runs out
      } else sendSse(res, TYPED_ANSWER);
    });
    const dir = mkdtempSync(join(tmpdir(), 'ai4ts-proxy-'));
    writeFileSync(join(dir, 'client'), 'file-client-token\n');
    writeFileSync(join(dir, 'upstream'), '  file-upstream-token\n');
    const child = run(
      [
        ...['--upstream', daemon.url, '--dialect', 'typed', '--port', '0'],
        ...['--proxy-token-file', join(dir, 'client'), '--upstream-token-file', join(dir, 'upstream')],
        ...['--first-event-timeout', '100', '--max-concurrent-streams', '4', '--keep-alive-timeout', '1000'],
      ],
      { AI4TS_PROXY_TOKEN: 'env-client-token' },
    );
    const url = (await firstLine(child)).slice('listening on '.length);
    expect((await ask(url, 'env-client-token')).status).toBe(401);
    const response = await ask(url, 'file-client-token');
    expect(readChunks(await response.text()).text).toBe('It is 18C in Paris.');
    expect(daemon.requests[0]?.headers.authorization).toBe('Bearer file-upstream-token');
    const stalled = await ask(url, 'file-client-token', 'stall');
    expect(stalled.status).toBe(504);
    expect(await stalled.json()).toMatchObject({ error: { code: 'upstream_timeout_first_event' } });
    rmSync(dir, { recursive: true });
  });

  it('--stream-store-max-streams bounds the memory store: with its streams all live, a new resumable one is a 503', async () => {
    daemon = await startDaemon((res) => startSse(res)); // then no event: each stream stays live
    const child = run([...['--upstream', daemon.url, '--dialect', 'typed', '--port', '0', '--resumable'], '--stream-store-max-streams', '1'], {
      AI4TS_PROXY_TOKEN: 'cli-key',
    });
    const url = (await firstLine(child)).slice('listening on '.length);
    void ask(url, 'cli-key').catch(() => undefined); // waits for its first event, until the CLI stops
    await vi.waitFor(() => expect(daemon?.requests).toHaveLength(1));
    const refused = await ask(url, 'cli-key');
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(await refused.json()).toMatchObject({ error: { code: 'store_unavailable' } });
    expect(daemon.requests).toHaveLength(1);
  });

  it('--response-store-max-responses bounds the response store: past it a stored response is a 507, none dropped', async () => {
    daemon = await startDaemon((res) => sendSse(res, TYPED_ANSWER));
    const child = run(['--upstream', daemon.url, '--dialect', 'typed', '--port', '0', '--response-store-max-responses', '1'], {
      AI4TS_PROXY_TOKEN: 'cli-key',
    });
    const url = (await firstLine(child)).slice('listening on '.length);
    const create = () =>
      fetch(`${url}/v1/responses`, {
        method: 'POST',
        headers: { authorization: 'Bearer cli-key', 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'daemon', input: 'hi' }),
      });
    const kept = (await (await create()).json()) as { id: string; store: boolean };
    expect(kept.store).toBe(true);
    const refused = await create();
    expect(refused.status).toBe(507);
    expect(await refused.json()).toMatchObject({ error: { code: 'response_store_full' } });
    const read = await fetch(`${url}/v1/responses/${kept.id}`, { headers: { authorization: 'Bearer cli-key' } });
    expect(await read.json()).toMatchObject({ id: kept.id, status: 'completed' });
  });

  it('reads a YAML routing file (by its extension), and names the line of a bad field', async () => {
    daemon = await startDaemon((res) => sendSse(res, TYPED_ANSWER));
    const dir = mkdtempSync(join(tmpdir(), 'ai4ts-routes-'));
    try {
      const good = join(dir, 'routes.yaml');
      writeFileSync(good, `# every model to the daemon\nroutes:\n  - model: "*"\n    upstream: ${daemon.url}\n    dialect: typed\n`);
      const child = run(['--routes', good, '--port', '0'], { AI4TS_PROXY_TOKEN: 'cli-key' });
      const url = (await firstLine(child)).slice('listening on '.length);
      const { done, text } = readChunks(await (await ask(url, 'cli-key')).text());
      expect(done).toBe(true);
      expect(text).toBe('It is 18C in Paris.');

      const bad = join(dir, 'routes.yml');
      writeFileSync(bad, 'routes:\n  - model: x\n    upstream: http://127.0.0.1:9/x\n    dialect: sse\n');
      const { code, stderr } = await finish(run(['--routes', bad]));
      expect(code).toBe(2);
      expect(stderr).toContain('--routes: the routing file: routes.0.dialect (line 4, column 14): Invalid option');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('exits with status 2 for a token given twice, an unreadable token file or a bad count', async () => {
    const cases = [
      [['--auth-token', 'a-token-1', '--proxy-token-file', '/etc/hostname'], 'not both'],
      [['--upstream-token-file', '/nonexistent/ai4ts-token'], 'cannot read /nonexistent/ai4ts-token (ENOENT)'],
      [['--idle-timeout=-5'], '--idle-timeout must be an integer of at least 0'],
      [['--max-concurrent-streams', '0'], '--max-concurrent-streams must be an integer of at least 1'],
      [['--stream-store-max-bytes', '0'], '--stream-store-max-bytes must be an integer of at least 1'],
      [['--redis', 'redis://127.0.0.1:9', '--stream-store-max-streams', '5'], 'bound the memory store'],
      [['--response-store-max-responses', '0'], '--response-store-max-responses must be an integer of at least 1'],
      [['--redis', 'redis://127.0.0.1:9', '--response-store-max-bytes', '5'], 'Redis has its maxmemory'],
    ] as const;
    // In parallel: each run starts npx and tsx.
    const results = await Promise.all(
      cases.map(([args]) => finish(run(['--upstream', 'http://127.0.0.1:9/x', '--dialect', 'typed', ...args]))),
    );
    results.forEach(({ code, stderr }, i) => {
      expect(code).toBe(2);
      expect(stderr).toContain(cases[i]?.[1]);
    });
  });

  it('refuses to start with --provider anthropic and no ANTHROPIC_API_KEY, as with an unset keyEnv', async () => {
    const { code, stderr } = await finish(
      run(['--provider', 'anthropic', '--port', '0'], { ANTHROPIC_API_KEY: '', AI4TS_UPSTREAM_TOKEN: '' }),
    );
    expect(code).toBe(2);
    expect(stderr).toContain('The anthropic preset needs an API key: set ANTHROPIC_API_KEY, or give upstreamToken');
  });

  it('exits with status 2 and the usage for bad arguments', async () => {
    const { code, stderr } = await finish(run(['--upstream', 'http://127.0.0.1:9/x', '--dialect', 'sse-of-my-own']));
    expect(code).toBe(2);
    expect(stderr).toContain('--dialect must be typed or named');
    expect(stderr).toContain('Usage: ai4ts-gateway');
  });

  it('exits with status 2 for an unknown flag', async () => {
    const { code, stderr } = await finish(run(['--verbose']));
    expect(code).toBe(2);
    expect(stderr).toContain("Unknown option '--verbose'");
    expect(stderr).toContain('--help');
  });

  it('a runtime error (the port is taken) is one line, with no usage, and status 2', async () => {
    const taken = createServer();
    taken.listen(0, '127.0.0.1');
    await once(taken, 'listening');
    try {
      const { port } = taken.address() as AddressInfo;
      const { code, stderr } = await finish(run(['--upstream', 'http://127.0.0.1:9/x', '--dialect', 'typed', '--port', String(port)]));
      expect(code).toBe(2);
      expect(stderr).toMatch(/^ai4ts-gateway: .*EADDRINUSE.*\n$/);
      expect(stderr).not.toContain('Usage');
    } finally {
      taken.close();
    }
  });
});
