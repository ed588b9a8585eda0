/**
 * Errors that explain themselves (issue 26, item 19): a baseURL without a scheme refused when the Transport is made,
 * a web page answering a streamed request named at once (not retried into StreamIncompleteError), a URL the
 * platform refuses ("bad port") not retried, the failure log line's request id, and bodies logged whole through
 * `console`.
 */
import { format } from 'node:util';
import { Ai4tsError, ConnectionError, ProtocolError, Transport, type TransportOptions } from '@ai4ts/core';
import { afterEach, describe, expect, it } from 'vitest';
import { serve, type TestServer } from '@ai4ts/test-kit';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const KEY = 'sk-explain-0123456789';
const transport = (options: TransportOptions = {}) =>
  new Transport({ baseURL: server?.baseURL, apiKey: KEY, backoff: { initialMs: 1, maxMs: 5 }, ...options });

async function drain(stream: AsyncIterable<unknown>): Promise<void> {
  for await (const _ of stream);
}

describe('a baseURL without a scheme', () => {
  it('is refused when the Transport is made, naming what to write instead', () => {
    expect(() => new Transport({ baseURL: 'localhost:8080/v1' })).toThrow(
      'baseURL "localhost:8080/v1" is not an http:// or https:// URL: write "http://localhost:8080/v1"',
    );
    expect(() => new Transport({ baseURL: 'api.example.com/v1' })).toThrow(Ai4tsError);
    expect(() => new Transport({ baseURL: 'ftp://example.com' })).toThrow('is not an http:// or https:// URL');
    expect(() => new Transport({ baseURL: 'http://localhost:8080/v1' })).not.toThrow();
  });

  it('a call’s own baseURL gets the same check', async () => {
    const error = await transport({ baseURL: 'http://127.0.0.1:1' })
      .request('chat/completions', { body: {}, options: { baseURL: 'localhost:8080/v1' } })
      .catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(Ai4tsError);
    expect((error as Error).message).toContain('is not an http:// or https:// URL');
  });
});

describe('a web page answering a streamed request', () => {
  it('fails at once with a ProtocolError naming the content type, not retried', async () => {
    server = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end('<html><body>Please log in</body></html>');
    });
    const error = await transport({ maxRetries: 2 })
      .stream('chat/completions', { body: { stream: true } })
      .then(drain)
      .catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(ProtocolError);
    expect((error as Error).message).toBe(
      'Expected an event stream (text/event-stream) but the server answered text/html; charset=utf-8 with status 200',
    );
    expect(server.requests).toBe(1);
  });
});

describe('a URL the platform refuses', () => {
  it('"bad port" is not retried: the same URL would be refused again', async () => {
    const retries: number[] = [];
    const error = await transport({ baseURL: 'http://127.0.0.1:10080/v1', maxRetries: 2, onRetry: (_e, n) => retries.push(n) })
      .request('chat/completions', { body: {} })
      .catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(Ai4tsError);
    expect(error).not.toBeInstanceOf(ConnectionError);
    expect((error as Error).message).toContain('bad port');
    expect(retries).toEqual([]);
  });
});

describe('the log', () => {
  it('logBodies through console prints the bodies whole, as JSON, not [Object]', async () => {
    server = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
    const printed: string[] = [];
    const print = (...args: unknown[]) => printed.push(format(...args));
    const logger = { debug: print, info: print, warn: print, error: print };
    const body = { model: 'm', messages: [{ role: 'user', content: [{ type: 'text', text: 'deep inside' }] }] };
    await transport({ logger, logLevel: 'debug', logBodies: true }).json('chat/completions', { body });
    const line = printed.find((text) => text.startsWith('ai4ts: request body'));
    expect(line).toContain(JSON.stringify(body));
    expect(line).not.toContain('[Object]');
  });
});
