#!/usr/bin/env node
/**
 * `ai4ts-gateway` (and `ai4ts-gateway`, its old name, for one release): a gateway that answers Chat Completions,
 * Responses, Messages and Gemini in front of a typed- or named-event daemon, a provider of any of the four protocols, or
 * several of them by model (a routing file).
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { PROVIDERS, type ProviderName } from '@ai4ts/core';
import { loadOtel } from '@ai4ts/core/internal';
import type { GatewayOptions } from './context.js';
import { jsonLines } from './http/access-log.js';
import { listenGateway } from './http/listen.js';
import { FileKeyStore } from './keys/store.js';
import { keysReloader, Reloaders, routesReloader } from './reload.js';
import { MemoryStreamStore } from './state/memory.js';
import { MemoryResponseStore, type ResponseStore } from './state/responses.js';
import type { StreamStore } from './state/store.js';
import { httpFetch } from './upstreams/http-fetch.js';
import { readRoutes, routesFormatOf } from './upstreams/routes-file.js';

function isProviderName(name: string): name is ProviderName {
  return Object.hasOwn(PROVIDERS, name);
}

const USAGE = `Usage: ai4ts-gateway (--upstream URL (--dialect typed|named | --upstream-protocol chat|responses|messages|gemini)
                    | --provider NAME | --routes FILE) [--upstream-model M] [--on-unsupported drop|refuse]
                   [--port N] [--host 127.0.0.1]
                   [--resumable] [--stream-ttl MS] [--stream-max-events N] [--redis URL]
                   [--stream-store-max-bytes N] [--stream-store-max-streams N]
                   [--access-log] [--telemetry [--telemetry-content]] [--metrics [--metrics-token-file F]]
                   [--shutdown-timeout MS]
                   [--proxy-token-file F] [--upstream-token-file F] [--max-concurrent-streams N]
                   [--keys FILE|redis://URL [--admin-token-env VAR]]
                   [--upstream-headers-timeout MS] [--first-event-timeout MS] [--idle-timeout MS]
                   [--headers-timeout MS] [--request-timeout MS] [--keep-alive-timeout MS]
       ai4ts-gateway keys create|list|get|update|revoke|spend ... (ai4ts-gateway keys --help)
       ai4ts-gateway --help | --version`;

/** Each preset's key variables, as help lines: `    OPENAI_API_KEY (openai)`, wrapped at 110 columns. */
function presetKeys(): string {
  const byVariable = new Map<string, string[]>();
  for (const [name, preset] of Object.entries(PROVIDERS))
    for (const variable of preset.apiKeyEnv) byVariable.set(variable, [...(byVariable.get(variable) ?? []), name]);
  const lines: string[] = [];
  let line = '   ';
  for (const [variable, names] of byVariable) {
    const item = ` ${variable} (${names.join(', ')})`;
    if (line.length + item.length > 110) {
      lines.push(line);
      line = '   ';
    }
    line += item;
  }
  return [...lines, line].join('\n');
}

const HELP = `${USAGE}

A gateway: POST /v1/chat/completions, /v1/responses, /v1/messages and /v1beta/models/{model}:generateContent
(GET /v1/models, /healthz, /readyz) in front of a daemon that streams its own SSE dialect, or a provider of any of
the four protocols,
translated live. Prints "listening on http://HOST:PORT" first; SIGINT or SIGTERM stop it. SIGHUP, or a change
of the file, reads --routes and a --keys file again: a bad file is refused (its line named on stderr) and the one in
use stays.

Options:
  --upstream URL         the daemon's URL (each request is one POST to it), or a provider's API root
                         with its version (https://api.openai.com/v1)
  --dialect typed|named  the daemon's SSE dialect
  --upstream-protocol chat|responses|messages|gemini
                         the protocol the provider at --upstream speaks
  --provider NAME        a preset (openai, anthropic, deepseek, ...): its URL, protocol and key variable
  --upstream-model M     the model name sent to a provider (default: the client's)
  --on-unsupported drop|refuse
                         a request field the provider's protocol lacks: sent without it and named in
                         x-ai4ts-dropped (drop, the default), or a 400 naming it (refuse)
  --routes FILE          a JSON or YAML (.yaml, .yml) routing file: model pattern -> upstream, or several
                         with a strategy and fallbacks (docs/gateway.md, docs/operations.md)
  --resumable            every stream resumable (else per request: x-ai4ts-resumable: 1)
  --stream-ttl MS        keep a resumable stream this long after its last event (default 600000)
  --stream-max-events N  events kept per resumable stream (default 10000)
  --stream-store-max-bytes N
                         the memory store's bound on message text in all streams (default 67108864, 64 MiB):
                         the oldest finished streams go first; past it a new resumable stream is a 503
  --stream-store-max-streams N
                         the memory store's bound on streams kept, live and finished (default 1000)
  --response-ttl MS      keep a stored Responses answer this long after its last write (default 3600000)
  --response-store-max-bytes N
                         the memory store's bound on stored responses' JSON (default 67108864, 64 MiB): past
                         it a new response is a 507 response_store_full
  --response-store-max-responses N
                         the memory store's bound on stored responses (default 10000)
  --access-log           one JSON line per request on stderr (never a key)
  --telemetry            OpenTelemetry spans and metrics through the tracer, meter and propagator your
                         OTel setup registers (node --import ./otel.mjs): needs @opentelemetry/api
  --telemetry-content    with --telemetry, record the messages sent upstream and the answers on the spans
  --metrics              Prometheus metrics on GET /metrics (docs/operations.md), open to whoever reaches
                         the listener unless --metrics-token-file or AI4TS_METRICS_TOKEN sets a token
  --metrics-token-file F a file holding the bearer token scrapers of /metrics must send
  --redis URL            keep resumable streams and stored responses in Redis (redis://...), shared by
                         every instance
  --shutdown-timeout MS  on SIGTERM, let streams finish this long (default 30000)
  --port N               the port to listen on; 0 picks a free one (default 8080)
  --host H               the address to bind (default 127.0.0.1: this machine only)
  --proxy-token-file F   a file holding the bearer token clients must send (default: none checked)
  --upstream-token-file F
                         a file holding the token sent to the daemon as "Authorization: Bearer <token>"
  --auth-token T         the client token on the command line; WARNING: other local users see it (ps)
  --upstream-token U     the daemon's token on the command line; WARNING: other local users see it (ps)
  --max-concurrent-streams N
                         streams served at once; past it a 503 with Retry-After (default 256)
  --keys FILE|redis://URL
                         virtual keys (made by "ai4ts-gateway keys create"): a JSON file, reread on change and
                         on SIGHUP (a bad file keeps the keys before it), or Redis shared by every instance,
                         which keeps the limits and spend there too; every request then needs a key or the
                         proxy token (docs/operations.md)
  --admin-token-env VAR  with --keys, the admin API /admin/keys answers the bearer token in the variable VAR
  --upstream-headers-timeout MS
                         wait for the daemon's response headers (default 30000; 0: no limit)
  --first-event-timeout MS
                         wait for the daemon's first event (default 120000; 0: no limit)
  --idle-timeout MS      wait between two daemon events (default 120000; 0: no limit)
  --headers-timeout MS   a client's request headers must arrive within MS, else 408 (default 30000)
  --request-timeout MS   a client's whole request must arrive within MS, else 408 (default 60000)
  --keep-alive-timeout MS
                         an idle kept-alive client connection is closed after MS (default 5000)
  -h, --help             print this help and exit
  -v, --version          print the version and exit

Environment variables:
  AI4TS_PROXY_TOKEN      the bearer token clients must send
  AI4TS_UPSTREAM_TOKEN   the token sent to the daemon, or the provider's API key
  AI4TS_METRICS_TOKEN    with --metrics, the bearer token scrapers must send
  A token flag or file wins over its variable; a token is trimmed of surrounding whitespace.
  With --provider and no upstream token, the preset's own key variable:
${presetKeys()}
  A routing file's route reads the variable its keyEnv names.

Exit status: 0 after --help, --version or a signal; 2 for bad arguments or when it cannot listen.
ai4ts-proxy is the same command under its old name, kept for one release.
Docs: docs/gateway.md and docs/proxy.md in the ai4ts repository.`;

function fail(message: string): never {
  process.stderr.write(`ai4ts-gateway: ${message}\n${USAGE}\n`);
  process.exit(2);
}

/** A failure of a good command line (the port is taken, a module is missing): one line, no usage. */
function stop(message: string): never {
  process.stderr.write(`ai4ts-gateway: ${message}\n`);
  process.exit(2);
}

function parse() {
  try {
    return parseArgs({
      options: {
        upstream: { type: 'string' },
        dialect: { type: 'string' },
        'upstream-protocol': { type: 'string' },
        provider: { type: 'string' },
        'upstream-model': { type: 'string' },
        'on-unsupported': { type: 'string' },
        routes: { type: 'string' },
        resumable: { type: 'boolean' },
        'access-log': { type: 'boolean' },
        telemetry: { type: 'boolean' },
        'telemetry-content': { type: 'boolean' },
        metrics: { type: 'boolean' },
        'metrics-token-file': { type: 'string' },
        'stream-ttl': { type: 'string' },
        'stream-max-events': { type: 'string' },
        'stream-store-max-bytes': { type: 'string' },
        'stream-store-max-streams': { type: 'string' },
        'response-ttl': { type: 'string' },
        'response-store-max-bytes': { type: 'string' },
        'response-store-max-responses': { type: 'string' },
        redis: { type: 'string' },
        'shutdown-timeout': { type: 'string' },
        port: { type: 'string', default: '8080' },
        host: { type: 'string', default: '127.0.0.1' },
        'auth-token': { type: 'string' },
        'upstream-token': { type: 'string' },
        'proxy-token-file': { type: 'string' },
        'upstream-token-file': { type: 'string' },
        'max-concurrent-streams': { type: 'string' },
        keys: { type: 'string' },
        'admin-token-env': { type: 'string' },
        'upstream-headers-timeout': { type: 'string' },
        'first-event-timeout': { type: 'string' },
        'idle-timeout': { type: 'string' },
        'headers-timeout': { type: 'string' },
        'request-timeout': { type: 'string' },
        'keep-alive-timeout': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
        version: { type: 'boolean', short: 'v' },
      },
    }).values;
  } catch (error) {
    fail(error instanceof Error ? error.message : String(error));
  }
}

// `ai4ts-gateway keys ...` manages virtual keys and exits; its module is loaded only then.
if (process.argv[2] === 'keys') {
  const { keysCommand } = await import('./keys/cli.js');
  const write = (stream: NodeJS.WriteStream) => (text: string) => void stream.write(text);
  process.exit(await keysCommand(process.argv.slice(3), process.env, write(process.stdout), write(process.stderr)));
}

const values = parse();
if (values.help) {
  process.stdout.write(`${HELP}\n`);
  process.exit(0);
}
if (values.version) {
  // package.json sits one level above both src/ (run through tsx) and dist/ (the installed bin).
  const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
  process.stdout.write(`${version}\n`);
  process.exit(0);
}

const { upstream, dialect, provider } = values;
const upstreamProtocol = values['upstream-protocol'];
if (!upstream && !provider && !values.routes) fail('give --upstream, --provider or --routes');
if (upstream && !URL.canParse(upstream)) fail(`--upstream is not a URL: ${upstream}`);
if (upstream && provider) fail('give --upstream or --provider, not both');
if (dialect !== undefined && dialect !== 'typed' && dialect !== 'named') fail('--dialect must be typed or named');
if (upstreamProtocol !== undefined && !['chat', 'responses', 'messages', 'gemini'].includes(upstreamProtocol))
  fail('--upstream-protocol must be chat, responses, messages or gemini');
if (upstream && (dialect === undefined) === (upstreamProtocol === undefined))
  fail('--upstream needs --dialect (a daemon) or --upstream-protocol (a provider)');
if (provider !== undefined && !Object.hasOwn(PROVIDERS, provider)) fail(`--provider: unknown preset ${provider}`);
const onUnsupported = values['on-unsupported'];
if (onUnsupported !== undefined && onUnsupported !== 'drop' && onUnsupported !== 'refuse')
  fail('--on-unsupported must be drop or refuse');
const port = Number(values.port);
if (!Number.isInteger(port) || port < 0 || port > 65535) fail(`--port is not a port: ${values.port}`);

/**
 * A token from its flag, its file or its environment variable (in that order; flag and file together are refused).
 * The flag works, but the command line is visible to every local user, hence the warning.
 */
function token(
  flag: 'auth-token' | 'upstream-token',
  file: 'proxy-token-file' | 'upstream-token-file',
  variable: string,
): string | undefined {
  const given = values[flag];
  const path = values[file];
  if (given !== undefined && path !== undefined) fail(`give --${flag} or --${file}, not both`);
  if (given !== undefined) {
    process.stderr.write(
      `ai4ts-gateway: warning: --${flag} shows the token to every local user (ps); use ${variable} or --${file}\n`,
    );
    return given.trim() || fail(`--${flag} is empty`);
  }
  if (path !== undefined) return tokenFile(file, path);
  return process.env[variable]?.trim() || undefined;
}

/** The token a file holds, trimmed; a file that cannot be read or holds none stops the start. */
function tokenFile(flag: string, path: string): string {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    // Only the error's code: nothing read from the file is ever printed.
    const code = error instanceof Error && 'code' in error ? String(error.code) : 'unreadable';
    fail(`--${flag}: cannot read ${path} (${code})`);
  }
  return text.trim() || fail(`--${flag}: ${path} holds no token`);
}

/** A count of milliseconds (or of streams) from a flag; undefined when the flag is absent. */
function count(flag: keyof typeof values, min: number): number | undefined {
  const raw = values[flag];
  if (raw === undefined) return undefined;
  if (typeof raw !== 'string' || !/^\d+$/.test(raw) || Number(raw) < min)
    fail(`--${flag} must be an integer of at least ${min}: ${String(raw)}`);
  return Number(raw);
}

const auth = token('auth-token', 'proxy-token-file', 'AI4TS_PROXY_TOKEN');
const upstreamToken = token('upstream-token', 'upstream-token-file', 'AI4TS_UPSTREAM_TOKEN');
const maxConcurrentStreams = count('max-concurrent-streams', 1);
const streamTtl = count('stream-ttl', 1);
const maxEvents = count('stream-max-events', 1);
const storeMaxBytes = count('stream-store-max-bytes', 1);
const storeMaxStreams = count('stream-store-max-streams', 1);
if (values.redis !== undefined && (storeMaxBytes !== undefined || storeMaxStreams !== undefined))
  fail('--stream-store-max-bytes and --stream-store-max-streams bound the memory store; Redis has its maxmemory');
const responseTtl = count('response-ttl', 1);
const responseMaxBytes = count('response-store-max-bytes', 1);
const responseMaxResponses = count('response-store-max-responses', 1);
if (values.redis !== undefined && (responseMaxBytes !== undefined || responseMaxResponses !== undefined))
  fail('--response-store-max-bytes and --response-store-max-responses bound the memory store; Redis has its maxmemory');
const responseOptions = responseTtl === undefined ? {} : { ttlMs: responseTtl };
const shutdownMs = count('shutdown-timeout', 0) ?? 30_000;
if (values.redis !== undefined && !/^rediss?:\/\//.test(values.redis)) fail('--redis must be a redis:// or rediss:// URL');
const storeOptions = {
  ...(streamTtl === undefined ? {} : { ttlMs: streamTtl }),
  ...(maxEvents === undefined ? {} : { maxEvents }),
};
const upstreamTimeouts = {
  headers: count('upstream-headers-timeout', 0),
  firstEvent: count('first-event-timeout', 0),
  idle: count('idle-timeout', 0),
};
const serverTimeouts = {
  headersMs: count('headers-timeout', 0),
  requestMs: count('request-timeout', 0),
  keepAliveMs: count('keep-alive-timeout', 0),
};

if (values['telemetry-content'] && !values.telemetry) fail('--telemetry-content needs --telemetry');
if (values['metrics-token-file'] !== undefined && !values.metrics) fail('--metrics-token-file needs --metrics');
const metricsTokenFile = values['metrics-token-file'];
const metricsToken = metricsTokenFile === undefined ? process.env.AI4TS_METRICS_TOKEN?.trim() || undefined : tokenFile('metrics-token-file', metricsTokenFile);
// Loaded now, so that a missing @opentelemetry/api stops the start rather than failing each request.
if (values.telemetry) await Promise.resolve(loadOtel()).catch((error: Error) => stop(error.message));

/** The routing file's routes; its keys come from the environment variables it names. */
function routes(path: string | undefined) {
  if (path === undefined) return undefined;
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = error instanceof Error && 'code' in error ? String(error.code) : 'unreadable';
    fail(`--routes: cannot read ${path} (${code})`);
  }
  try {
    return readRoutes(text, process.env, routesFormatOf(path));
  } catch (error) {
    fail(`--routes: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/**
 * The stores of resumable streams and of stored responses: Redis (its module, and ioredis, loaded only then; the
 * responses on the streams' connection) or this process's memory.
 */
async function stores(): Promise<{ store: StreamStore; responseStore: ResponseStore }> {
  if (values.redis === undefined)
    return {
      store: new MemoryStreamStore({
        ...storeOptions,
        ...(storeMaxBytes === undefined ? {} : { maxBytes: storeMaxBytes }),
        ...(storeMaxStreams === undefined ? {} : { maxStreams: storeMaxStreams }),
      }),
      responseStore: new MemoryResponseStore({
        ...responseOptions,
        ...(responseMaxBytes === undefined ? {} : { maxBytes: responseMaxBytes }),
        ...(responseMaxResponses === undefined ? {} : { maxResponses: responseMaxResponses }),
      }),
    };
  const redis = await import('./state/redis.js').catch(() =>
    stop('--redis needs the ioredis package, an optional peer dependency: npm install ioredis'),
  );
  const store = new redis.RedisStreamStore({ redis: values.redis, ...storeOptions });
  return { store, responseStore: store.responses(responseOptions) };
}

/** The virtual keys of `--keys`, and the admin token of `--admin-token-env` (a keys file is reloaded as the routes are). */
async function keys(): Promise<Pick<GatewayOptions, 'keys' | 'adminToken'>> {
  const variable = values['admin-token-env'];
  if (values.keys === undefined) return variable === undefined ? {} : fail('--admin-token-env needs --keys');
  const adminToken = variable === undefined ? undefined : process.env[variable]?.trim() || fail(`--admin-token-env: ${variable} is not set`);
  const { openKeys } = await import('./keys/cli.js');
  const opened = await openKeys(values.keys).catch((error: Error) => fail(`--keys: ${error.message}`));
  return { keys: opened, ...(adminToken === undefined ? {} : { adminToken }) };
}

const keyOptions = await keys();
const gateway = await listenGateway({
  ...(upstream === undefined ? {} : { upstream }),
  ...(dialect === 'typed' || dialect === 'named' ? { dialect } : {}),
  ...(upstreamProtocol === 'chat' ||
  upstreamProtocol === 'responses' ||
  upstreamProtocol === 'messages' ||
  upstreamProtocol === 'gemini'
    ? { upstreamProtocol }
    : {}),
  ...(provider !== undefined && isProviderName(provider) ? { provider } : {}),
  ...(values['upstream-model'] === undefined ? {} : { upstreamModel: values['upstream-model'] }),
  ...(onUnsupported === 'drop' || onUnsupported === 'refuse' ? { onUnsupported } : {}),
  ...(values.routes === undefined ? {} : { routes: routes(values.routes) }),
  resumable: values.resumable === true,
  ...(await stores()),
  ...(values['access-log'] ? { log: jsonLines() } : {}),
  ...(values.telemetry ? { telemetry: { recordContent: values['telemetry-content'] === true } } : {}),
  ...(values.metrics ? { metrics: metricsToken === undefined ? true : { token: metricsToken } } : {}),
  port,
  host: values.host,
  auth,
  upstreamToken,
  upstreamTimeouts,
  serverTimeouts,
  fetch: httpFetch,
  ...(maxConcurrentStreams === undefined ? {} : { maxConcurrentStreams }),
  ...keyOptions,
}).catch((error: Error) => stop(error.message));

/** The files read again on SIGHUP and when they change; each outcome one line on stderr. */
const reloaders = new Reloaders((outcome) =>
  process.stderr.write(
    outcome.applied
      ? `ai4ts-gateway: reloaded ${outcome.name}\n`
      : `ai4ts-gateway: ${outcome.name} not reloaded, the one in use is kept: ${outcome.reason}\n`,
  ),
);
if (values.routes !== undefined) reloaders.add(routesReloader(values.routes, process.env, gateway.setRoutes));
if (keyOptions.keys?.store instanceof FileKeyStore) reloaders.add(keysReloader(keyOptions.keys.store));
reloaders.watch();
// Only with something to reload: otherwise SIGHUP keeps its default, ending the process (a closed terminal).
if (reloaders.size > 0) process.on('SIGHUP', () => void reloaders.reloadAll());

process.stdout.write(`listening on ${gateway.url}\n`);
// SIGTERM (and SIGINT) shut down gracefully: see ListeningGateway.shutdown.
for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.once(signal, () => {
    reloaders.close();
    void gateway.shutdown({ deadlineMs: shutdownMs }).then(() => process.exit(0));
  });
