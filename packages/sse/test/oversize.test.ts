import { DEFAULT_MAX_EVENT_SIZE, parseSse } from '@ai4ts/sse';
import { afterEach, expect, it } from 'vitest';
import { closeAll, closed, SSE_HEADERS, serve } from '@ai4ts/test-kit';

afterEach(closeAll);

const TOTAL = 64 * 1024 * 1024;

it('64 MiB without a newline: SseError event_too_large, the socket is closed, and the rest is never read', async () => {
  let written = 0;
  let writtenAtClose = -1;
  let gone!: Promise<void>;
  const server = await serve((_req, res) => {
    gone = closed(res).then(() => {
      writtenAtClose = written;
    });
    res.writeHead(200, SSE_HEADERS);
    res.write('data: ');
    const chunk = Buffer.alloc(64 * 1024, 'x');
    const pump = () => {
      while (written < TOTAL && !res.destroyed) {
        written += chunk.length;
        if (!res.write(chunk)) return void res.once('drain', pump);
      }
      res.end();
    };
    pump();
  });

  const consume = async () => {
    for await (const _ of parseSse(await fetch(server.url))) expect.unreachable('no event should complete');
  };
  await expect(consume()).rejects.toMatchObject({ name: 'SseError', code: 'event_too_large' });
  await gone;
  // Backpressure holds the server to what the client read plus socket buffers: far less than the 64 MiB.
  expect(writtenAtClose).toBeGreaterThan(DEFAULT_MAX_EVENT_SIZE);
  expect(writtenAtClose).toBeLessThan(TOTAL / 2);
});
