/** A real redis-server for the tests (Debian's): started on a free port with nothing saved, and stopped. */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { sleep } from '@ai4ts/test-kit';

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** A redis-server on `port`, nothing saved; resolves once it answers PING. `extra` are more server arguments. */
export async function startRedis(port: number, extra: readonly string[] = []): Promise<ChildProcess> {
  const args = ['--port', String(port), '--save', '', '--appendonly', 'no', '--bind', '127.0.0.1', ...extra];
  const child = spawn('redis-server', args, { stdio: 'ignore' });
  for (let i = 0; i < 100; i++) {
    try {
      if (redisCli(port, 'ping') === 'PONG') return child;
    } catch {
      // not up yet
    }
    await sleep(50);
  }
  throw new Error('redis-server did not start');
}

/** One redis-cli command's output, trimmed. */
export function redisCli(port: number, ...args: string[]): string {
  return execFileSync('redis-cli', ['-p', String(port), ...args], { encoding: 'utf8' }).trim();
}

/** Stops a child process (with `group`, its whole process group) and waits for its exit. */
export async function stop(child: ChildProcess | undefined, group = false, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  const exited = once(child, 'exit');
  if (group) process.kill(-child.pid, signal);
  else child.kill(signal);
  await exited;
}
