/**
 * The approval flow of examples/web-chat in a real browser: Debian's Chromium (headless, driven by playwright-core)
 * asks the agent, sees the transfer waiting with its arguments, and approves or denies it; the server resumed the
 * loop from the JSON state it stored, and the page shows the answer.
 */
import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApprovalChat, startApprovalChat } from '../../../examples/web-chat/approval.js';

const CHROMIUM = '/usr/bin/chromium';
const hasChromium = existsSync(CHROMIUM);
if (!hasChromium) console.warn(`web approval browser test skipped: ${CHROMIUM} is absent (apt-get install -y chromium)`);

describe.skipIf(!hasChromium)('examples/web-chat approvals in Chromium', { timeout: 60_000 }, () => {
  let browser: Browser | undefined;
  let chat: ApprovalChat | undefined;

  beforeAll(async () => {
    chat = await startApprovalChat();
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--headless', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-sync'],
    });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await chat?.close();
  });

  it.each([
    ['Approve', 'Sent 250 to Bob.'],
    ['Deny', 'I did not send the money.'],
  ])('a person clicks %s and the resumed loop answers', async (button, expected) => {
    if (!browser || !chat) throw new Error('setup failed');
    const page = await browser.newPage();
    const failures: string[] = [];
    page.on('pageerror', (error) => failures.push(error.message));
    await page.goto(chat.url);
    await page.fill('#question', 'Send 250 to Bob');
    await page.click('#send');

    await page.waitForSelector('.call');
    expect(await page.textContent('.call .args')).toBe('{"amount":250,"to":"Bob"}');
    expect(await page.textContent('#answer')).toBe('');
    await page.click(`.call button:text-is("${button}")`);

    await page.waitForSelector(`#answer:text-is("${expected}")`);
    expect(await page.$$('.call')).toHaveLength(0);
    expect(await page.textContent('#error')).toBe('');
    expect(failures).toEqual([]);
    await page.close();
  });
});
