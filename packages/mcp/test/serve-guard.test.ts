// serveMcp over HTTP as an attacker meets it: another site's page (Origin), a rebound DNS name (Host), no token, a
// client that opens sessions without end, sessions left idle.
import { request as httpRequest } from 'node:http';
import { defineTool } from '@ai4ts/core';
import { type ServedMcp, type ServeMcpOptions, serveMcp } from '@ai4ts/mcp';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { serve, type TestServer } from '@ai4ts/test-kit';
import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod';

const ran: string[] = [];
const tools = [
  defineTool({
    name: 'touch',
    parameters: z.object({ ms: z.number().default(0) }),
    execute: async ({ ms }) => {
      ran.push('touch');
      await new Promise((resolve) => setTimeout(resolve, ms));
      return 'touched';
    },
  }),
];

let served: ServedMcp | undefined;
let http: TestServer | undefined;
let client: Client | undefined;
afterEach(async () => {
  await client?.close();
  await served?.close();
  await http?.close();
  served = http = client = undefined;
  ran.length = 0;
});

async function start(options: Partial<ServeMcpOptions> = {}): Promise<string> {
  served = serveMcp(tools, { name: 'guarded', version: '1.0.0', ...options });
  http = await serve(served.handler, { readBody: false });
  return new URL('/mcp', http.url).href;
}

const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};
const CALL = { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'touch', arguments: {} } };

/** A raw POST over node:http (so the Host header can be anything), its answer read whole. */
function post(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
  method = 'POST',
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, {
      method,
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    });
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
    });
    req.on('error', reject);
    req.end(method === 'POST' ? JSON.stringify(body) : undefined);
  });
}

/** Opens a session with a raw `initialize` (no standing GET stream, unlike the SDK client) and returns its id. */
async function open(url: string, headers: Record<string, string> = {}): Promise<string> {
  const answer = await post(url, INITIALIZE, headers);
  expect(answer.status).toBe(200);
  const id = answer.headers['mcp-session-id'];
  if (typeof id !== 'string') throw new Error('no session id');
  await post(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, { ...headers, 'mcp-session-id': id });
  return id;
}

describe('serveMcp over HTTP: DNS rebinding protection (localhost only by default)', { timeout: 20_000 }, () => {
  it("another site's Origin gets 403 before any JSON-RPC runs: no initialize, no tools/call", async () => {
    const url = await start();
    const evil = { origin: 'http://evil.example' };
    const refused = await post(url, INITIALIZE, evil);
    expect(refused.status).toBe(403);
    expect(JSON.parse(refused.text)).toEqual({
      jsonrpc: '2.0',
      error: { code: -32000, message: 'Invalid Origin: http://evil.example' },
      id: null,
    });
    const id = await open(url);
    expect((await post(url, CALL, { ...evil, 'mcp-session-id': id })).status).toBe(403);
    expect(ran).toEqual([]);
    // A page of this machine may call it, on any port; a client without Origin (not a browser) too.
    expect((await post(url, CALL, { origin: 'http://localhost:5173', 'mcp-session-id': id })).status).toBe(200);
    expect((await post(url, CALL, { 'mcp-session-id': id })).status).toBe(200);
    expect(ran).toEqual(['touch', 'touch']);
  });

  it('a Host that is not this machine (a rebound DNS name) gets 403', async () => {
    const url = await start();
    const refused = await post(url, INITIALIZE, { host: 'evil.example:8080' });
    expect(refused.status).toBe(403);
    expect(refused.text).toContain('Invalid Host: evil.example');
    expect((await post(url, INITIALIZE, { host: 'localhost:1234' })).status).toBe(200);
  });

  it('allowedHosts and allowedOrigins replace the defaults', async () => {
    const url = await start({ allowedHosts: ['mcp.example.com'], allowedOrigins: ['https://app.example.com'] });
    expect((await post(url, INITIALIZE)).status).toBe(403); // 127.0.0.1 is no longer allowed
    const host = { host: 'mcp.example.com' };
    expect((await post(url, INITIALIZE, { ...host, origin: 'http://localhost:3000' })).status).toBe(403);
    expect((await post(url, INITIALIZE, { ...host, origin: 'https://app.example.com' })).status).toBe(200);
  });

  it('the fetch handler checks the request URL the same way', async () => {
    served = serveMcp(tools, { name: 'guarded', version: '1.0.0' });
    const init = { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify(INITIALIZE) };
    expect((await served.fetch(new Request('http://edge.example/mcp', init))).status).toBe(403);
    expect((await served.fetch(new Request('http://localhost/mcp', init))).status).toBe(200);
  });
});

describe('serveMcp over HTTP: authentication', { timeout: 20_000 }, () => {
  it('bearerToken: without it 401 with WWW-Authenticate, with a wrong one too; the SDK client with it works', async () => {
    const url = await start({ bearerToken: ['old-token-123', 'new-token-456'] });
    const missing = await post(url, INITIALIZE);
    expect(missing.status).toBe(401);
    expect(missing.headers['www-authenticate']).toBe('Bearer');
    const wrong = await post(url, INITIALIZE, { authorization: 'Bearer new-token-000' });
    expect(wrong.status).toBe(401);
    expect(wrong.headers['www-authenticate']).toBe('Bearer error="invalid_token"');
    expect(wrong.text).not.toContain('new-token');
    // A session id is no credential: a request in a session needs the token too.
    const id = await open(url, { authorization: 'Bearer old-token-123' });
    expect((await post(url, CALL, { 'mcp-session-id': id })).status).toBe(401);
    expect(ran).toEqual([]);

    client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: 'Bearer new-token-456' } } }),
    );
    expect(await client.callTool({ name: 'touch', arguments: {} })).toMatchObject({ content: [{ text: 'touched' }] });
  });

  it('authenticate(request): false is a 401; it sees the request (after the host and origin checks)', async () => {
    const seen: string[] = [];
    const url = await start({
      authenticate: (request) => {
        seen.push(new URL(request.url).pathname);
        return request.headers.get('x-api-key') === 'let-me-in';
      },
    });
    expect((await post(url, INITIALIZE, { 'x-api-key': 'nope' })).status).toBe(401);
    expect((await post(url, INITIALIZE, { 'x-api-key': 'let-me-in', origin: 'http://evil.example' })).status).toBe(403);
    expect((await post(url, INITIALIZE, { 'x-api-key': 'let-me-in' })).status).toBe(200);
    expect(seen).toEqual(['/mcp', '/mcp']);
  });
});

describe('serveMcp over HTTP: sessions are bounded', { timeout: 20_000 }, () => {
  it('past maxSessions a new client gets a 503 that says why; ending a session makes room', async () => {
    const url = await start({ maxSessions: 2 });
    const first = await open(url);
    await open(url);
    const refused = await post(url, INITIALIZE);
    expect(refused.status).toBe(503);
    expect(JSON.parse(refused.text).error.message).toMatch(/at most 2 MCP sessions at once \(maxSessions\)/);
    expect((await post(url, undefined, { 'mcp-session-id': first }, 'DELETE')).status).toBe(200);
    await open(url);
  });

  it('100 sessions by default', async () => {
    const url = await start();
    for (let i = 0; i < 100; i++) await open(url);
    expect((await post(url, INITIALIZE)).status).toBe(503);
  });

  it('an idle session is closed after sessionIdleTimeout; one with a request running is not idle', async () => {
    const url = await start({ sessionIdleTimeout: 300 });
    const idle = await open(url);
    const busy = await open(url);
    const call = post(url, { ...CALL, params: { name: 'touch', arguments: { ms: 1_200 } } }, { 'mcp-session-id': busy });
    await new Promise((resolve) => setTimeout(resolve, 800));
    expect((await post(url, { jsonrpc: '2.0', id: 3, method: 'tools/list' }, { 'mcp-session-id': idle })).status).toBe(404);
    const answer = await call;
    expect(answer.status).toBe(200);
    expect(answer.text).toContain('touched');
  });

  it("a connected SDK client's standing GET stream keeps its session; once it leaves, the session idles out", async () => {
    const url = await start({ sessionIdleTimeout: 300 });
    client = new Client({ name: 'test', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(url));
    await client.connect(transport);
    const id = transport.sessionId;
    if (id === undefined) throw new Error('no session id');
    await new Promise((resolve) => setTimeout(resolve, 800));
    expect(await client.callTool({ name: 'touch', arguments: {} })).toMatchObject({ content: [{ text: 'touched' }] });
    // Closing the SDK client drops its GET stream without a DELETE: the session is idle from then on.
    await client.close();
    client = undefined;
    await expect
      .poll(async () => (await post(url, { jsonrpc: '2.0', id: 3, method: 'tools/list' }, { 'mcp-session-id': id })).status, {
        timeout: 5_000,
        interval: 500,
      })
      .toBe(404);
  });
});
