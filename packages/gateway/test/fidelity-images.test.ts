/**
 * Images through the gateway: a base64 image and an image URL from a client of each protocol reach each upstream in
 * that upstream's own form (`image_url` parts, `input_image`, Messages `image` blocks with a base64 or url source,
 * Gemini `inlineData` or `fileData`), and a part no upstream form carries (a PDF) is named in `x-ai4ts-dropped`.
 */
import type { GatewayProtocol, } from '@ai4ts/gateway';
import { describe, expect, it } from 'vitest';
import { gatewayPerProtocol, PROTOCOLS } from './fidelity-helpers.js';

const DATA = 'iVBORw0KGgo=';
const DATA_URL = `data:image/png;base64,${DATA}`;
const URL_IMAGE = 'https://example.com/cat.png';

/** A client's request with a base64 image and (where the protocol has one) a URL image; the path it goes to. */
const REQUESTS: Record<GatewayProtocol, { path: string; body: unknown; urls: boolean }> = {
  chat: {
    path: '/v1/chat/completions',
    urls: true,
    body: {
      model: 'm',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is it?' },
            { type: 'image_url', image_url: { url: DATA_URL } },
            { type: 'image_url', image_url: { url: URL_IMAGE } },
          ],
        },
      ],
    },
  },
  responses: {
    path: '/v1/responses',
    urls: true,
    body: {
      model: 'm',
      input: [
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'What is it?' },
            { type: 'input_image', image_url: DATA_URL },
            { type: 'input_image', image_url: URL_IMAGE },
          ],
        },
      ],
    },
  },
  messages: {
    path: '/v1/messages',
    urls: true,
    body: {
      model: 'm',
      max_tokens: 100,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is it?' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: DATA } },
            { type: 'image', source: { type: 'url', url: URL_IMAGE } },
          ],
        },
      ],
    },
  },
  gemini: {
    path: '/v1beta/models/m:generateContent',
    // A Gemini client's `fileData` names uploaded files, not web URLs: it sends base64 only here.
    urls: false,
    body: { contents: [{ role: 'user', parts: [{ text: 'What is it?' }, { inlineData: { mimeType: 'image/png', data: DATA } }] }] },
  },
};

/** The images an upstream request carries, as data URLs or URLs, in order. */
function imagesSent(protocol: GatewayProtocol, body: unknown): string[] {
  const text = JSON.stringify(body);
  const found: string[] = [];
  const pattern = {
    chat: /"image_url":\{"url":"([^"]+)"/g,
    responses: /"type":"input_image","image_url":"([^"]+)"/g,
    messages: /"source":\{"type":"(?:base64","media_type":"([^"]+)","data":"([^"]+)|url","url":"([^"]+))"/g,
    gemini: /"(?:inlineData":\{"mimeType":"([^"]+)","data":"([^"]+)|fileData":\{"fileUri":"([^"]+))"/g,
  }[protocol];
  for (const match of text.matchAll(pattern)) {
    if (protocol === 'chat' || protocol === 'responses') found.push(String(match[1]));
    else found.push(match[3] ?? `data:${match[1]};base64,${match[2]}`);
  }
  return found;
}

const upstreams = gatewayPerProtocol({ script: () => ({ content: 'A cat.' }) });

const PAIRS = PROTOCOLS.flatMap((inbound) => PROTOCOLS.map((upstream) => [inbound, upstream] as const));

describe.each(PAIRS)('%s in, %s upstream', (inbound, upstreamProtocol) => {
  it('the images arrive in the upstream form, in order', async () => {
    const upstream = upstreams.get(upstreamProtocol);
    if (!upstream) throw new Error('no upstream');
    const { path, body, urls } = REQUESTS[inbound];
    const response = await fetch(`${upstream.gateway.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(response.status).toBe(200);
    await response.json();
    expect(response.headers.get('x-ai4ts-dropped')).toBeNull();
    expect(imagesSent(upstreamProtocol, upstream.model.requests.at(-1)?.body)).toEqual(urls ? [DATA_URL, URL_IMAGE] : [DATA_URL]);
  });
});

it('a part no upstream form carries is named', async () => {
  const upstream = upstreams.get('chat');
  if (!upstream) throw new Error('no upstream');
  const response = await fetch(`${upstream.gateway.url}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      model: 'm',
      max_tokens: 100,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Summarize.' },
            { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' } },
          ],
        },
      ],
    }),
  });
  expect(response.status).toBe(200);
  await response.json();
  expect(response.headers.get('x-ai4ts-dropped')).toBe('messages[].content[].document');
});
