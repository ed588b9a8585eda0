#!/usr/bin/env node
/** `ai4ts-proxy`: an OpenAI-compatible endpoint in front of a typed- or named-event daemon. */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { listenOpenAIProxy } from './listen.js';

const USAGE = `Usage: ai4ts-proxy --upstream URL --dialect typed|named [--port N] [--host 127.0.0.1]
                   [--auth-token T] [--upstream-token U]
       ai4ts-proxy --help | --version`;

const HELP = `${USAGE}

An OpenAI Chat Completions endpoint (POST /v1/chat/completions, GET /v1/models) in front of a daemon
that streams its own SSE dialect. Prints "listening on http://HOST:PORT" first; SIGINT or SIGTERM stop it.

Options:
  --upstream URL         the daemon's URL; each chat request is one POST to it (required)
  --dialect typed|named  the daemon's SSE dialect (required)
  --port N               the port to listen on; 0 picks a free one (default 8080)
  --host H               the address to bind (default 127.0.0.1: this machine only)
  --auth-token T         the bearer token clients must send (default: none checked)
  --upstream-token U     sent to the daemon as "Authorization: Bearer U" (default: none)
  -h, --help             print this help and exit
  -v, --version          print the version and exit

Environment variables:
  none: every setting is a flag.

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

const proxy = await listenOpenAIProxy({
  upstream,
  dialect,
  port,
  host: values.host,
  auth: values['auth-token'],
  upstreamToken: values['upstream-token'],
}).catch((error: Error) => fail(error.message));

process.stdout.write(`listening on ${proxy.url}\n`);
for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.once(signal, () => void proxy.close().then(() => process.exit(0)));
