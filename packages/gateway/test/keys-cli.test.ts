/**
 * `ai4ts-gateway keys ...` on a keys file: create prints the key once and stores only its hash, list shows no key,
 * update and revoke change the record; and the file store a gateway reads: a change is picked up, a bad file keeps
 * the keys before it and says which line and field.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FileKeyStore, keysReloader, type ReloadOutcome, Reloaders } from '@ai4ts/gateway';
import { startMockModel } from '@ai4ts/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { keysCommand } from '../src/keys/cli.js';
import { hashKey } from '../src/keys/key.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function keysFile(): string {
  const dir = mkdtempSync(join(tmpdir(), 'keys-cli-'));
  dirs.push(dir);
  return join(dir, 'keys.json');
}

/** Runs `keys ...` in this process: its exit status and what it wrote. */
async function keys(...args: string[]): Promise<{ status: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const status = await keysCommand(
    args,
    {},
    (text) => {
      out += text;
    },
    (text) => {
      err += text;
    },
  );
  return { status, out, err };
}

describe('ai4ts-gateway keys', () => {
  it('create prints the key once; the file holds its hash, and list, update and revoke never show it', async () => {
    const file = keysFile();
    const created = await keys('create', '--keys', file, '--name', 'ci', '--budget', '25', '--rpm', '60', '--tpm', '200000', '--models', 'gpt-*,claude-*', '--expires', '30d', '--team', 'ml');
    expect(created.status).toBe(0);
    const key = created.out.trim();
    expect(key).toMatch(/^ai4ts-vk-[\w-]{43}$/);
    expect(created.err).not.toContain(key);
    const stored = readFileSync(file, 'utf8');
    expect(stored).not.toContain(key);
    expect(stored).toContain(await hashKey(key));

    const listed = await keys('list', '--keys', file);
    expect(listed.out).not.toContain(key);
    const [record] = JSON.parse(listed.out) as Array<Record<string, unknown>>;
    expect(record).toMatchObject({
      name: 'ci',
      prefix: key.slice(0, 13),
      rpm: 60,
      tpm: 200000,
      models: ['gpt-*', 'claude-*'],
      budget: { usd: 25, period: 'month' },
      metadata: { team: 'ml' },
    });
    expect(record).not.toHaveProperty('hash');
    const days = (Date.parse(String(record?.expiresAt)) - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(29.9);
    expect(days).toBeLessThanOrEqual(30);

    const id = String(record?.id);
    const updated = await keys('update', id, '--keys', file, '--rpm', '5');
    expect(JSON.parse(updated.out)).toMatchObject({ id, rpm: 5, tpm: 200000 });
    const revoked = await keys('revoke', id, '--keys', file);
    expect(revoked.status).toBe(0);
    expect(revoked.err).toContain(`revoked ${id}`);
    expect(JSON.parse((await keys('get', id, '--keys', file)).out)).toHaveProperty('revokedAt');
  });

  it('refuses bad flags with the usage, and says a file store keeps no spend', async () => {
    const file = keysFile();
    for (const args of [
      ['create', '--keys', file],
      ['create', '--keys', file, '--name', 'x', '--rpm', '1.5'],
      ['create', '--keys', file, '--name', 'x', '--expires', 'soon'],
      ['create', '--name', 'x'],
      ['frobnicate', '--keys', file],
    ]) {
      const run = await keys(...args);
      expect(run.status).toBe(2);
      expect(run.err).toContain('Usage: ai4ts-gateway keys');
    }
    await keys('create', '--keys', file, '--name', 'ci');
    const [record] = JSON.parse((await keys('list', '--keys', file)).out) as Array<{ id: string }>;
    const spend = await keys('spend', String(record?.id), '--keys', file);
    expect(spend.status).toBe(2);
    expect(spend.err).toContain('/admin/keys/{id}/spend');
  });

  it('runs as the ai4ts-gateway command', async () => {
    const file = keysFile();
    const child = spawn('npx', ['tsx', 'packages/gateway/src/cli.ts', 'keys', 'create', '--name', 'spawned', '--keys', file], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
    });
    const [code] = await once(child, 'exit');
    expect(code).toBe(0);
    const key = out.trim();
    expect(key).toMatch(/^ai4ts-vk-/);
    const store = new FileKeyStore(file);
    expect((await store.find(await hashKey(key)))?.name).toBe('spawned');
  }, 60_000);
});

describe('ai4ts-gateway --keys FILE --admin-token-env VAR', () => {
  it('serves the keys of the file, the admin API under the token, and a bad file (on change, and on SIGHUP) keeps the keys', async () => {
    const file = keysFile();
    const key = (await keys('create', '--keys', file, '--name', 'ci', '--rpm', '1')).out.trim();
    const model = await startMockModel({ script: () => ({ content: 'Hello' }) });
    // One process (tsx as node's loader, not its own bin), so that SIGHUP reaches the gateway itself.
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'packages/gateway/src/cli.ts', '--upstream', model.baseURL, '--upstream-protocol', 'chat', '--port', '0', '--keys', file, '--admin-token-env', 'TEST_ADMIN'],
      { cwd: ROOT, env: { ...process.env, TEST_ADMIN: 'admin-7c2e' }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stderr = '';
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    try {
      let stdout = '';
      for await (const chunk of child.stdout) {
        stdout += chunk;
        if (stdout.includes('\n')) break;
      }
      const url = /listening on (\S+)/.exec(stdout)?.[1];
      expect(url).toBeDefined();
      const ask = () =>
        fetch(`${url}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}` },
          body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }),
        });
      expect((await ask()).status).toBe(200);
      expect((await ask()).status).toBe(429);
      const list = await fetch(`${url}/admin/keys`, { headers: { authorization: 'Bearer admin-7c2e' } });
      expect(list.status).toBe(200);
      expect((await fetch(`${url}/admin/keys`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(401);

      // The change is seen by the watch; SIGHUP then rereads it again (a second complaint, with no change between):
      // the same reloaders, and the same line, as the routes file's.
      const complaints = () => stderr.split(`--keys ${file} not reloaded, the one in use is kept: the keys file: keys`).length - 1;
      writeFileSync(file, '{"keys": 3}');
      await expect.poll(complaints).toBeGreaterThan(0);
      const seen = complaints();
      child.kill('SIGHUP');
      await expect.poll(complaints).toBeGreaterThan(seen);
      expect(((await (await fetch(`${url}/admin/keys`, { headers: { authorization: 'Bearer admin-7c2e' } })).json()) as { data: unknown[] }).data).toHaveLength(1);
      expect(stderr).not.toContain(key);
    } finally {
      if (child.exitCode === null) {
        const exited = once(child, 'exit');
        child.kill('SIGTERM');
        await exited;
      }
      await model.close();
    }
  }, 60_000);
});

describe('the keys file a gateway reads', () => {
  it('picks up a change; a bad file keeps the keys before it and names its line and field', async () => {
    const file = keysFile();
    await keys('create', '--keys', file, '--name', 'first');
    const store = new FileKeyStore(file);
    // Watched as the CLI watches it: by the reloaders the routes file shares.
    const outcomes: ReloadOutcome[] = [];
    const reloaders = new Reloaders((outcome) => outcomes.push(outcome));
    reloaders.add(keysReloader(store));
    reloaders.watch(20);
    const refusals = () => outcomes.flatMap((outcome) => (outcome.applied ? [] : [outcome.reason]));
    try {
      expect((await store.list()).map((key) => key.name)).toEqual(['first']);
      await keys('create', '--keys', file, '--name', 'second');
      await expect.poll(async () => (await store.list()).map((key) => key.name)).toEqual(['first', 'second']);

      const good = readFileSync(file, 'utf8');
      writeFileSync(file, good.replace(/"name": "second"/, '"name": "second",\n      "rpm": -3'));
      await expect.poll(() => refusals().length).toBeGreaterThan(0);
      expect(refusals().at(-1)).toMatch(/the keys file: keys\.1\.rpm \(line \d+, column \d+\): /);
      expect((await store.list()).map((key) => key.name)).toEqual(['first', 'second']);

      writeFileSync(file, '{"keys": [');
      await expect(store.reload()).rejects.toThrow(/the keys file is not JSON/);
      expect((await store.list()).map((key) => key.name)).toEqual(['first', 'second']);
    } finally {
      reloaders.close();
      await store.close();
    }
  });

  it('a bad file at the start is refused with its line', () => {
    const file = keysFile();
    writeFileSync(file, '{\n  "keys": [\n    {"id": "nope"}\n  ]\n}\n');
    expect(() => new FileKeyStore(file)).toThrow(/the keys file: keys\.0\.\w+ \(line 3, column \d+\)/);
  });
});
