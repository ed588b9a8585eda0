/**
 * The routing file read again while the gateway runs: a good file's new route served, a broken file refused with its
 * line and the routes in use kept, a change noticed by the file watch alone, a stream in flight across a reload
 * finished by the upstream it started with; and the CLI doing the same on SIGHUP, spawned as a user runs it (with
 * --metrics, scraped).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type ListeningGateway, listenGateway, type RouteSpec } from '@ai4ts/gateway';
import { sseFrame } from '@ai4ts/test-kit';
import { afterEach, describe, expect, it } from 'vitest';
import { resolveContext } from '../src/context.js';
import { type ReloadOutcome, Reloaders, routesReloader } from '../src/reload.js';
import { readRoutes } from '../src/upstreams/routes-file.js';
import { type Daemon, readChunks, startDaemon } from './helpers.js';
import { parsePrometheusText, total } from './prometheus-text.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const METRICS_TOKEN = 'metrics-token-from-a-file-31415926';
const cleanups: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'ai4ts-reload-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A daemon that answers every request with `text`, after `hold` resolves when given. */
async function daemonSaying(text: string, hold?: Promise<void>): Promise<Daemon> {
  const daemon = await startDaemon(async (res: ServerResponse) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(sseFrame({ type: 'text', content: `${text} ` }));
    await hold;
    res.end(sseFrame({ type: 'done', tokens: { prompt: 1, completion: 1, total: 2 } }));
  });
  cleanups.push(() => daemon.close());
  return daemon;
}

function routesYaml(routes: Record<string, Daemon>): string {
  return `routes:\n${Object.entries(routes)
    .map(([model, daemon]) => `  - model: ${model}\n    upstream: ${daemon.url}\n    dialect: typed\n`)
    .join('')}`;
}

/** A broken routing file: line 4 names a dialect there is none of. */
const BROKEN = 'routes:\n  - model: b-model\n    upstream: http://127.0.0.1:9/x\n    dialect: grpc\n';

/** The text a streamed chat answer for `model` carried, and whether it ended cleanly. */
async function ask(url: string, model: string): Promise<{ status: number; text: string; done: boolean }> {
  const response = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model, stream: true, messages: [{ role: 'user', content: 'hi' }] }),
  });
  if (response.status !== 200) return { status: response.status, text: await response.text(), done: false };
  const { text, done } = readChunks(await response.text());
  return { status: 200, text, done };
}

/** The gateway on the routes of `path`, with its reloaders; each outcome resolves the next `outcome()`. */
async function reloadingGateway(path: string) {
  const outcomes: ReloadOutcome[] = [];
  const waiting: Array<(outcome: ReloadOutcome) => void> = [];
  const reloaders = new Reloaders((outcome) => {
    const waiter = waiting.shift();
    if (waiter) waiter(outcome);
    else outcomes.push(outcome);
  });
  const proxy: ListeningGateway = await listenGateway({ routes: readRoutes(readFileSync(path, 'utf8'), {}, 'yaml') });
  cleanups.push(() => proxy.close());
  reloaders.add(routesReloader(path, {}, proxy.setRoutes));
  cleanups.push(() => reloaders.close());
  const outcome = () =>
    new Promise<ReloadOutcome>((resolve) => {
      const early = outcomes.shift();
      if (early) resolve(early);
      else waiting.push(resolve);
    });
  return { proxy, reloaders, outcome };
}

describe('reloading the routing file', () => {
  it('serves a good file’s new route, and keeps the routes in use when the file is broken, naming its line', async () => {
    const [a, b] = [await daemonSaying('from-a'), await daemonSaying('from-b')];
    const path = join(tempDir(), 'routes.yaml');
    writeFileSync(path, routesYaml({ 'a-model': a }));
    const { proxy, reloaders, outcome } = await reloadingGateway(path);
    expect((await ask(proxy.url, 'b-model')).status).toBe(404);

    writeFileSync(path, routesYaml({ 'a-model': a, 'b-model': b }));
    await reloaders.reloadAll();
    expect(await outcome()).toEqual({ name: `--routes ${path}`, applied: true });
    expect(await ask(proxy.url, 'b-model')).toEqual({ status: 200, text: 'from-b ', done: true });

    writeFileSync(path, BROKEN);
    await reloaders.reloadAll();
    const refused = await outcome();
    expect(refused).toMatchObject({ applied: false });
    expect(refused.applied === false && refused.reason).toContain('routes.0.dialect (line 4, column 14)');
    expect(await ask(proxy.url, 'a-model')).toEqual({ status: 200, text: 'from-a ', done: true });
    expect(await ask(proxy.url, 'b-model')).toEqual({ status: 200, text: 'from-b ', done: true });

    rmSync(path);
    await reloaders.reloadAll();
    const missing = await outcome();
    expect(missing.applied === false && missing.reason).toBe(`cannot read ${path} (ENOENT)`);
    expect((await ask(proxy.url, 'a-model')).status).toBe(200);
  });

  it('notices a change of the file by itself (fs.watch), even one that replaces the file', async () => {
    const [a, b] = [await daemonSaying('from-a'), await daemonSaying('from-b')];
    const dir = tempDir();
    const path = join(dir, 'routes.yaml');
    writeFileSync(path, routesYaml({ 'a-model': a }));
    const { proxy, reloaders, outcome } = await reloadingGateway(path);
    reloaders.watch(20);
    // As an editor saves: a new file renamed over the old one.
    writeFileSync(join(dir, 'routes.yaml.tmp'), routesYaml({ 'a-model': b }));
    renameSync(join(dir, 'routes.yaml.tmp'), path);
    expect(await outcome()).toEqual({ name: `--routes ${path}`, applied: true });
    expect((await ask(proxy.url, 'a-model')).text).toBe('from-b ');
  });

  it('lets a stream in flight finish from the upstream it started with', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const [a, b] = [await daemonSaying('from-a', held), await daemonSaying('from-b')];
    const path = join(tempDir(), 'routes.yaml');
    writeFileSync(path, routesYaml({ 'a-model': a }));
    const { proxy, reloaders, outcome } = await reloadingGateway(path);

    const inFlight = ask(proxy.url, 'a-model');
    await new Promise<void>((resolve) => {
      const check = () => (a.requests.length > 0 ? resolve() : setTimeout(check, 5));
      check();
    });
    writeFileSync(path, routesYaml({ 'a-model': b }));
    await reloaders.reloadAll();
    expect(await outcome()).toMatchObject({ applied: true });
    expect((await ask(proxy.url, 'a-model')).text).toBe('from-b ');
    release();
    expect(await inFlight).toEqual({ status: 200, text: 'from-a ', done: true });
  });
});

describe('setRoutes', () => {
  it('refuses a route it cannot build and keeps the routes in use; a replaced route’s key stays a secret', () => {
    const daemon = (model: string, upstreamToken: string): RouteSpec => ({
      model,
      upstream: 'http://127.0.0.1:9/chat',
      dialect: 'typed',
      upstreamToken,
    });
    const context = resolveContext({ routes: [daemon('a-model', 'sk-old-upstream-key-000111')] });
    const before = context.router.pick('a-model');
    expect(() => context.setRoutes([{ model: 'b-model', provider: 'openai-compatible' }])).toThrow(RangeError);
    expect(context.router.pick('a-model')).toBe(before);
    expect(context.models).toEqual(['a-model']);

    context.setRoutes([daemon('b-model', 'sk-new-upstream-key-222333')]);
    expect(context.router.pick('a-model')).toBeUndefined();
    expect(context.models).toEqual(['b-model']);
    // A request routed before the swap may still fail holding the old key: it is scrubbed like the new one.
    expect(context.secrets).toEqual(expect.arrayContaining(['sk-old-upstream-key-000111', 'sk-new-upstream-key-222333']));
  });
});

describe('the CLI on SIGHUP', { timeout: 30_000 }, () => {
  /** The CLI run by node itself (tsx as its loader), so that the signal reaches it and nothing in between. */
  function run(args: string[]): { child: ChildProcess; stderr: () => string } {
    const child = spawn(process.execPath, ['--import', 'tsx', 'packages/gateway/src/cli.ts', ...args], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    cleanups.push(async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
    });
    let stderr = '';
    child.stderr?.on('data', (chunk) => {
      stderr += chunk;
    });
    return { child, stderr: () => stderr };
  }

  async function listening(child: ChildProcess): Promise<string> {
    let text = '';
    for await (const chunk of child.stdout ?? []) {
      text += chunk;
      const match = /^listening on (\S+)\n/.exec(text);
      if (match?.[1]) return match[1];
    }
    throw new Error('The CLI exited without listening');
  }

  async function stderrLine(stderr: () => string, count: number): Promise<string[]> {
    for (;;) {
      const lines = stderr().split('\n').filter(Boolean);
      if (lines.length >= count) return lines;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  it('reads --routes again: a good file applied, a broken one refused with its line and the old routes kept', async () => {
    const [a, b] = [await daemonSaying('from-a'), await daemonSaying('from-b')];
    // The file the CLI is given is a link into another directory: writing the target there is not seen by the
    // watch on the link's directory, so only SIGHUP can be what reloads it.
    const target = join(tempDir(), 'routes.yaml');
    const path = join(tempDir(), 'routes.yaml');
    writeFileSync(target, routesYaml({ 'a-model': a }));
    symlinkSync(target, path);
    const tokenFile = join(tempDir(), 'metrics-token');
    writeFileSync(tokenFile, `${METRICS_TOKEN}\n`);
    const { child, stderr } = run(['--routes', path, '--port', '0', '--metrics', '--metrics-token-file', tokenFile]);
    const url = await listening(child);
    expect(await ask(url, 'b-model')).toMatchObject({ status: 404 });

    writeFileSync(target, routesYaml({ 'a-model': a, 'b-model': b }));
    child.kill('SIGHUP');
    expect((await stderrLine(stderr, 1))[0]).toBe(`ai4ts-gateway: reloaded --routes ${path}`);
    expect(await ask(url, 'b-model')).toEqual({ status: 200, text: 'from-b ', done: true });

    writeFileSync(target, BROKEN);
    child.kill('SIGHUP');
    expect((await stderrLine(stderr, 2))[1]).toBe(
      `ai4ts-gateway: --routes ${path} not reloaded, the one in use is kept: the routing file: routes.0.dialect (line 4, column 14): Invalid option: expected one of "typed"|"named"`,
    );
    expect(await ask(url, 'b-model')).toEqual({ status: 200, text: 'from-b ', done: true });
    expect(child.exitCode).toBe(null);
    // --metrics behind the file's token: the routes' models as labels, the one added by the reload too.
    expect((await fetch(`${url}/metrics`)).status).toBe(401);
    const scraped = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    const metrics = parsePrometheusText(await scraped.text());
    expect(total(metrics, 'ai4ts_gateway_requests_total', { model: 'b-model', status: '200' })).toBe(2);
    expect(total(metrics, 'ai4ts_gateway_requests_total', { route: '/v1/chat/completions', status: '404' })).toBe(1);
  });

  it('one SIGHUP reads --routes and the --keys file, each refused or applied on its own', async () => {
    const a = await daemonSaying('from-a');
    // Both given as links into another directory: only SIGHUP, not the watch, can reload them here.
    const [routesTarget, keysTarget] = [join(tempDir(), 'routes.yaml'), join(tempDir(), 'keys.json')];
    const [routes, keys] = [join(tempDir(), 'routes.yaml'), join(tempDir(), 'keys.json')];
    writeFileSync(routesTarget, routesYaml({ 'a-model': a }));
    writeFileSync(keysTarget, '{"keys": []}\n');
    symlinkSync(routesTarget, routes);
    symlinkSync(keysTarget, keys);
    const { child, stderr } = run(['--routes', routes, '--keys', keys, '--port', '0']);
    await listening(child);

    child.kill('SIGHUP');
    expect((await stderrLine(stderr, 2)).slice(0, 2)).toEqual([
      `ai4ts-gateway: reloaded --routes ${routes}`,
      `ai4ts-gateway: reloaded --keys ${keys}`,
    ]);

    writeFileSync(keysTarget, '{"keys": [\n');
    child.kill('SIGHUP');
    const lines = await stderrLine(stderr, 4);
    expect(lines.slice(2, 4)).toEqual([
      `ai4ts-gateway: reloaded --routes ${routes}`,
      expect.stringMatching(new RegExp(`^ai4ts-gateway: --keys ${keys} not reloaded, the one in use is kept: the keys file is not JSON`)),
    ]);
    expect(child.exitCode).toBe(null);
  });
});
