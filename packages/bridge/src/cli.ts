#!/usr/bin/env node
/** `ai4ts-proxy`: an OpenAI-compatible endpoint in front of a typed- or named-event daemon. */
import { parseArgs } from 'node:util';
import { listenOpenAIProxy } from './listen.js';

const USAGE = `Usage: ai4ts-proxy --upstream URL --dialect typed|named [--port N] [--host 127.0.0.1]
                   [--auth-token T] [--upstream-token U]`;

function fail(message: string): never {
  process.stderr.write(`ai4ts-proxy: ${message}\n${USAGE}\n`);
  process.exit(2);
}

let values: Record<string, string | undefined>;
try {
  ({ values } = parseArgs({
    options: {
      upstream: { type: 'string' },
      dialect: { type: 'string' },
      port: { type: 'string', default: '8080' },
      host: { type: 'string', default: '127.0.0.1' },
      'auth-token': { type: 'string' },
      'upstream-token': { type: 'string' },
    },
  }));
} catch (error) {
  fail(error instanceof Error ? error.message : String(error));
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
