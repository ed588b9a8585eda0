import { AbortError } from '@ai4ts/core';
import { describe, expect, it } from 'vitest';
import { isRetryableStatus, MAX_RETRY_AFTER_MS, retryDelay, sleep } from '../src/transport/retry.js';

describe('retry rules', () => {
  it('retries 408, 409, 429 and 5xx only', () => {
    const retryable = [400, 401, 403, 404, 408, 409, 413, 422, 429, 500, 502, 503, 504, 529].filter(isRetryableStatus);
    expect(retryable).toEqual([408, 409, 429, 500, 502, 503, 504, 529]);
  });

  it('backs off exponentially with up to 25% jitter, capped', () => {
    for (let attempt = 0; attempt < 8; attempt++) {
      const nominal = Math.min(500 * 2 ** attempt, 8000);
      for (let i = 0; i < 50; i++) {
        const delay = retryDelay(attempt) as number;
        expect(delay).toBeGreaterThan(nominal * 0.75 - 1e-9);
        expect(delay).toBeLessThanOrEqual(nominal);
      }
    }
    expect(retryDelay(3, { initialMs: 1, maxMs: 4 })).toBeLessThanOrEqual(4);
  });

  it('prefers the server hint: retry-after-ms, then Retry-After seconds or date; too long means no retry', () => {
    expect(retryDelay(0, {}, new Headers({ 'retry-after-ms': '150', 'retry-after': '9' }))).toBe(150);
    expect(retryDelay(0, {}, new Headers({ 'retry-after': '2' }))).toBe(2000);
    const date = new Date(Date.now() + 30_000).toUTCString();
    const fromDate = retryDelay(0, {}, new Headers({ 'retry-after': date })) as number;
    expect(fromDate).toBeGreaterThan(25_000);
    expect(fromDate).toBeLessThanOrEqual(30_000);
    expect(retryDelay(0, {}, new Headers({ 'retry-after': String(MAX_RETRY_AFTER_MS / 1000 + 1) }))).toBeUndefined();
    const fallback = retryDelay(0, {}, new Headers({ 'retry-after': 'soon' })) as number;
    expect(fallback).toBeGreaterThan(0);
    expect(fallback).toBeLessThanOrEqual(500);
  });

  it('sleep is abortable, before and during the wait', async () => {
    await expect(sleep(1, undefined)).resolves.toBeUndefined();
    await expect(sleep(10_000, AbortSignal.abort('stop'))).rejects.toBeInstanceOf(AbortError);
    const controller = new AbortController();
    const pending = sleep(10_000, controller.signal);
    controller.abort(new Error('user'));
    const error = await pending.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AbortError);
    expect((error as AbortError).cause).toEqual(new Error('user'));
  });
});
