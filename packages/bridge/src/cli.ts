#!/usr/bin/env node
/** `ai4ts-proxy`: an OpenAI-compatible endpoint in front of a typed- or named-event daemon. */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { listenOpenAIProxy } from './listen.js';

const USAGE = `Usage: ai4ts-proxy --upstream URL --dialect typed|named [--port N] [--host 127.0.0.1]
                   [--proxy-token-file F] [--upstream-token-file F] [--max-concurrent-streams N]
                   [--upstream-headers-timeout MS] [--first-event-timeout MS] [--idle-timeout MS]
                   [--headers-timeout MS] [--request-timeout MS] [--keep-alive-timeout MS]
       ai4ts-proxy --help | --version`;

const HELP = `${USAGE}

An OpenAI Chat Completions endpoint (POST /v1/chat/completions, GET /v1/models) in front of a daemon
that streams its own SSE dialect. Prints "listening on http://HOST:PORT" first; SIGINT or SIGTERM stop it.

Options:
  --upstream URL         the daemon's URL; each chat request is one POST to it (required)
  --dialect typed|named  the daemon's SSE dialect (required)
  --port N               the port to listen on; 0 picks a free one (default 8080)
  --host H               the address to bind (default 127.0.0.1: this machine only)
  --proxy-token-file F   a file holding the bearer token clients must send (default: none checked)
  --upstream-token-file F
                         a file holding the token sent to the daemon as "Authorization: Bearer <token>"
  --auth-token T         the client token on the command line; WARNING: other local users see it (ps)
  --upstream-token U     the daemon's token on the command line; WARNING: other local users see it (ps)
  --max-concurrent-streams N
                         streams served at once; past it a 503 with Retry-After (default 256)
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
  AI4TS_UPSTREAM_TOKEN   the token sent to the daemon
  A token flag or file wins over its variable; a token is trimmed of surrounding whitespace.

Exit status: 0 after --help, --version or a signal; 2 for bad arguments or when it cannot listen.
Docs: docs/proxy.md in the ai4ts repository.`;

function fail(message: string): never {
  process.stderr.write(`ai4ts-proxy: ${message}\n${USAGE}\n`);
  process.exit(2);
}

function parse() {
  try {
    return parseArgs({
      options: {
        upstream: { type: 'string' },
        dialect: { type: 'string' },
        port: { type: 'string', default: '8080' },
        host: { type: 'string', default: '127.0.0.1' },
        'auth-token': { type: 'string' },
        'upstream-token': { type: 'string' },
        'proxy-token-file': { type: 'string' },
        'upstream-token-file': { type: 'string' },
        'max-concurrent-streams': { type: 'string' },
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

const { upstream, dialect } = values;
if (!upstream) fail('--upstream is required');
if (!URL.canParse(upstream)) fail(`--upstream is not a URL: ${upstream}`);
if (dialect !== 'typed' && dialect !== 'named') fail('--dialect must be typed or named');
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
      `ai4ts-proxy: warning: --${flag} shows the token to every local user (ps); use ${variable} or --${file}\n`,
    );
    return given.trim() || fail(`--${flag} is empty`);
  }
  if (path !== undefined) {
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (error) {
      // Only the error's code: nothing read from the file is ever printed.
      const code = error instanceof Error && 'code' in error ? String(error.code) : 'unreadable';
      fail(`--${file}: cannot read ${path} (${code})`);
    }
    return text.trim() || fail(`--${file}: ${path} holds no token`);
  }
  return process.env[variable]?.trim() || undefined;
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
const upstreamTimeouts = {
  headersMs: count('upstream-headers-timeout', 0),
  firstEventMs: count('first-event-timeout', 0),
  idleMs: count('idle-timeout', 0),
};
const serverTimeouts = {
  headersMs: count('headers-timeout', 0),
  requestMs: count('request-timeout', 0),
  keepAliveMs: count('keep-alive-timeout', 0),
};

const proxy = await listenOpenAIProxy({
  upstream,
  dialect,
  port,
  host: values.host,
  auth,
  upstreamToken,
  upstreamTimeouts,
  serverTimeouts,
  ...(maxConcurrentStreams === undefined ? {} : { maxConcurrentStreams }),
}).catch((error: Error) => fail(error.message));

process.stdout.write(`listening on ${proxy.url}\n`);
for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.once(signal, () => void proxy.close().then(() => process.exit(0)));
