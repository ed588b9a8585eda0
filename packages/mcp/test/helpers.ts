import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { McpStdioOptions } from '@ai4ts/mcp';

/** What the fixture server saw: calls (`call`, `args`) and cancellations (`cancelled`, `reason`), with its pid. */
export interface FixtureRecord {
  pid?: number;
  call?: string;
  args?: Record<string, unknown>;
  cancelled?: string;
  reason?: string;
}

const STDIO_SERVER = fileURLToPath(new URL('./fixtures/stdio.mjs', import.meta.url));

/** The fixture server over stdio, recording into a fresh log file; `records()` reads it. */
export function stdioFixture(): { options: McpStdioOptions; records(): FixtureRecord[]; dispose(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'ai4ts-mcp-'));
  const log = join(dir, 'log.jsonl');
  return {
    options: { command: process.execPath, args: [STDIO_SERVER], env: { MCP_FIXTURE_LOG: log }, stderr: 'ignore' },
    records: () =>
      existsSync(log)
        ? readFileSync(log, 'utf8')
            .split('\n')
            .filter(Boolean)
            .map((line) => JSON.parse(line) as FixtureRecord)
        : [],
    dispose: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** Resolves once `check` holds, polling (a child process writes its log on its own schedule). */
export async function until(check: () => boolean, what: string, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Whether a process is alive. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
