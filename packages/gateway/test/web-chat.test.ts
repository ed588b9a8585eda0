/**
 * End to end in a real browser: Debian's Chromium (headless, driven by playwright-core) loads examples/web-chat,
 * types a question, and the answer streams through the proxy from a scripted daemon, rendered by @ai4ts/sse.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWebChat, type WebChat } from '../../../examples/web-chat/server.js';

const CHROMIUM = '/usr/bin/chromium';
const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const hasChromium = existsSync(CHROMIUM);
if (!hasChromium) console.warn(`web-chat browser test skipped: ${CHROMIUM} is absent (apt-get install -y chromium)`);

describe.skipIf(!hasChromium)('examples/web-chat in Chromium', { timeout: 60_000 }, () => {
  let browser: Browser | undefined;
  let chat: WebChat | undefined;

  beforeAll(async () => {
    // The page loads @ai4ts/sse's built ESM; build it (incremental, a no-op when up to date).
    execFileSync('npx', ['tsc', '-b', 'packages/sse'], { cwd: ROOT, stdio: 'inherit' });
    chat = await startWebChat();
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--no-sandbox',
        '--headless',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await chat?.close();
  });

  it('streams reasoning and text onto the page as they arrive', async () => {
    if (!browser || !chat) throw new Error('setup failed');
    const page = await browser.newPage();
    const failures: string[] = [];
    page.on('pageerror', (error) => failures.push(error.message));
    await page.goto(chat.url);
    // Record what the page shows after every DOM change, to prove the answer grows while it streams.
    await page.evaluate(() => {
      const seen: Array<{ status: string; answer: string }> = [];
      Object.assign(window, { seen });
      new MutationObserver(() => {
        const status = document.querySelector('.exchange:last-child .status')?.textContent ?? '';
        seen.push({ status, answer: document.querySelector('.exchange:last-child .answer')?.textContent ?? '' });
      }).observe(document.body, { subtree: true, childList: true, characterData: true });
    });
    await page.fill('#question', 'Is it raining in Paris?');
    await page.click('#send');

    await page.waitForSelector('.exchange:last-child .status:text-is("done")');
    const answer = await page.textContent('.exchange:last-child .answer');
    const expected = 'You asked: "Is it raining in Paris?". This answer streams token by token through the proxy.';
    expect(answer).toBe(expected);
    const seen = (await page.evaluate(() => (window as unknown as { seen: unknown }).seen)) as Array<{
      status: string;
      answer: string;
    }>;
    const partial = seen.filter(
      (s) => s.status === 'streaming' && s.answer.length > 0 && s.answer.length < expected.length,
    );
    expect(partial.length).toBeGreaterThan(3);
    expect(partial.every((s) => expected.startsWith(s.answer))).toBe(true);
    expect(await page.textContent('.exchange:last-child .reasoning')).toBe('Reading the question. Composing a reply.');
    expect(Number(await page.getAttribute('.exchange:last-child .answer', 'data-deltas'))).toBeGreaterThan(10);
    expect(await page.getAttribute('.exchange:last-child .status', 'data-tokens')).toBe(String(23 + expected.length));
    expect(await page.textContent('.exchange:last-child .error')).toBe('');
    expect(failures).toEqual([]);

    mkdirSync(`${ROOT}/test-artifacts`, { recursive: true });
    await page.screenshot({ path: `${ROOT}/test-artifacts/web-chat.png`, fullPage: true });
    expect(existsSync(`${ROOT}/test-artifacts/web-chat.png`)).toBe(true);
  });

  it('a reload mid-stream resumes the answer from the proxy: no gap, no duplicate, asked once', async () => {
    if (!browser) throw new Error('setup failed');
    // Slower tokens: the reload has seconds to land inside the answer, even on a loaded machine.
    const slow = await startWebChat({ tokenDelayMs: 200 });
    try {
      const page = await browser.newPage();
      const failures: string[] = [];
      page.on('pageerror', (error) => failures.push(error.message));
      const requests: string[] = [];
      page.on('request', (request) => {
        const url = new URL(request.url());
        if (url.pathname.startsWith('/v1/')) requests.push(`${request.method()} ${url.pathname} ${request.headers()['last-event-id'] ?? ''}`);
      });
      await page.goto(slow.url);
      await page.fill('#question', 'Will it snow in Oslo?');
      await page.click('#send');
      // Reload once the answer has begun and before it ends.
      await page.waitForFunction(() => (document.querySelector('.exchange:last-child .answer')?.textContent ?? '').length > 12);
      const before = (await page.textContent('.exchange:last-child .answer')) ?? '';
      expect(await page.textContent('.exchange:last-child .status')).toBe('streaming');
      await page.reload();

      await page.waitForSelector('.exchange:last-child .status:text-is("done")');
      const expected = 'You asked: "Will it snow in Oslo?". This answer streams token by token through the proxy.';
      expect(before.length).toBeLessThan(expected.length);
      expect(await page.textContent('.exchange:last-child .question')).toBe('Will it snow in Oslo?');
      expect(await page.textContent('.exchange:last-child .answer')).toBe(expected);
      expect(await page.textContent('.exchange:last-child .reasoning')).toBe('Reading the question. Composing a reply.');
      expect(await page.getAttribute('.exchange:last-child .status', 'data-tokens')).toBe(String(21 + expected.length));
      expect(await page.textContent('.exchange:last-child .error')).toBe('');
      // One question asked; after the reload, the rest read from the stream after the last event the page had.
      expect(requests[0]).toMatch(/^POST \/v1\/chat\/completions $/);
      expect(requests.slice(1)).toEqual([expect.stringMatching(/^GET \/v1\/streams\/[0-9a-f-]{36} [0-9a-f-]{36}:\d+$/)]);
      expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
      expect(failures).toEqual([]);
    } finally {
      await slow.close();
    }
  });
});
