/**
 * Server processes of the HTTP benches (proxy, gateway): each contender runs in its own process, measured from the
 * outside through /proc (so Linux only): its CPU time and its RSS.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));

export interface ServerProcess {
  child: ChildProcess;
  url: string;
  name: string;
}

/** A server process; resolves once it printed where it listens (`listening on http://HOST:PORT`). */
export async function startProcess(name: string, args: string[], env: Record<string, string> = {}): Promise<ServerProcess> {
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, TSX_TSCONFIG_PATH: 'bench/tsconfig.json', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  for await (const chunk of child.stdout ?? []) {
    out += String(chunk);
    const match = /listening on (http:\/\/\S+)/.exec(out);
    if (match?.[1]) return { child, url: match[1], name };
  }
  throw new Error(`${name} exited before listening: ${out}`);
}

/** The process's CPU time (user + system), in ms; 10 ms ticks. */
export function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

/** The process's resident set, in MB. */
export function rssMb(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(match?.[1]) / 1024;
}
