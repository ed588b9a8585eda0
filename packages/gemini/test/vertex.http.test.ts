/**
 * Gemini on Vertex AI through GeminiService, over a real socket: a node:http server that answers only a request on
 * Vertex's path for the project's Gemini model with the bearer token it issued (no API key), in Gemini's own SSE.
 */
import { Transport, vertex } from '@ai4ts/core';
import { serve, sseText } from '@ai4ts/test-kit';
import { describe, expect, it } from 'vitest';
import { GeminiService } from '../src/index.js';

const TOKEN = 'ya29.vertex-gemini-token-3e7a';
const PATH = '/v1/projects/p/locations/global/publishers/google/models/m:streamGenerateContent?alt=sse';

describe('GeminiService with the vertex() preset', () => {
  it('streams from the Vertex path with the access token as a bearer, and no key', async () => {
    const seen: { url: string | undefined; headers: Record<string, unknown>; body: string | undefined }[] = [];
    const server = await serve((req, res, n) => {
      seen.push({ url: req.url, headers: req.headers, body: server.bodies[n - 1] });
      if (req.url !== PATH || req.headers.authorization !== `Bearer ${TOKEN}`) {
        res.writeHead(401, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { code: 401, message: 'bad credentials', status: 'UNAUTHENTICATED' } }));
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(
        sseText([
          { candidates: [{ content: { role: 'model', parts: [{ text: 'Hello from ' }] }, index: 0 }] },
          {
            candidates: [{ content: { role: 'model', parts: [{ text: 'Vertex' }] }, finishReason: 'STOP', index: 0 }],
            usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 2, totalTokenCount: 5 },
          },
        ]),
      );
    });
    try {
      const preset = vertex({ project: 'p', location: 'global', publisher: 'google' });
      const transport = new Transport({
        provider: { ...preset, baseURL: `${server.url}v1/projects/p/locations/global/publishers/google` },
        accessToken: () => ({ token: TOKEN, expiresAt: Date.now() + 3_600_000 }),
        maxRetries: 0,
      });
      const gemini = new GeminiService(transport);
      const response = await gemini.stream({ model: 'm', contents: [{ role: 'user', parts: [{ text: 'Hi' }] }] }).final();
      expect(response.candidates?.[0]?.content?.parts).toEqual([{ text: 'Hello from Vertex' }]);
      expect(response.usageMetadata?.totalTokenCount).toBe(5);
      expect(seen).toHaveLength(1);
      expect(seen[0]?.url).toBe(PATH);
      expect(seen[0]?.headers.authorization).toBe(`Bearer ${TOKEN}`);
      expect(seen[0]?.headers).not.toHaveProperty('x-goog-api-key');
      expect(JSON.parse(seen[0]?.body ?? '{}')).not.toHaveProperty('model');
    } finally {
      await server.close();
    }
  });
});
