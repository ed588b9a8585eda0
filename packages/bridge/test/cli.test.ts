/** The `ai4ts-proxy` CLI, spawned as a user runs it (through tsx, from the sources). */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { type Daemon, readChunks, sse, startDaemon, TYPED_ANSWER } from './helpers.js';

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

function run(args: string[]): ChildProcess {
  const child = spawn('npx', ['tsx', 'packages/bridge/src/cli.ts', ...args], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true, // its own process group, so that cleanup reaches the CLI behind npx and tsx
  });
  children.push(child);
  return child;
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
      expect(stdout).toContain('Usage: ai4ts-proxy');
      for (const option of [
        '--upstream URL',
        '--dialect typed|named',
        '--port N',
        '--host H',
        '--auth-token T',
        '--upstream-token U',
        '--help',
        '--version',
      ])
        expect(stdout).toContain(option);
      expect(stdout).toContain('Environment variables:');
    }
  });

  it('--help wins over missing or bad arguments', async () => {
    const { code, stdout } = await finish(run(['--dialect', 'sse-of-my-own', '--help']));
    expect(code).toBe(0);
    expect(stdout).toContain('Usage: ai4ts-proxy');
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

  it('listens on 127.0.0.1 with --port 0, prints the URL first, and proxies with both tokens kept apart', async () => {
    daemon = await startDaemon((res) => sse(res, TYPED_ANSWER));
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
  });

  it('exits with status 2 and the usage for bad arguments', async () => {
    const { code, stderr } = await finish(run(['--upstream', 'http://127.0.0.1:9/x', '--dialect', 'sse-of-my-own']));
    expect(code).toBe(2);
    expect(stderr).toContain('--dialect must be typed or named');
    expect(stderr).toContain('Usage: ai4ts-proxy');
  });

  it('exits with status 2 for an unknown flag', async () => {
    const { code, stderr } = await finish(run(['--verbose']));
    expect(code).toBe(2);
    expect(stderr).toContain("Unknown option '--verbose'");
    expect(stderr).toContain('--help');
  });
});
