/** The one retry policy's decisions: which failures, at which attempt, after how long. */
import {
  AbortError,
  type Ai4tsError,
  ApiError,
  ConnectionError,
  MAX_RETRY_AFTER_MS,
  RetryPolicy,
  StreamIncompleteError,
  TimeoutError,
  Transport,
} from '@ai4ts/core';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { sleep } from '../src/transport/retry.js';

/** The failure an HTTP answer is judged as: its status and headers, body unread. */
const answer = (status: number, headers: Record<string, string> = {}) =>
  ApiError.fromResponse(status, undefined, new Headers(headers));

afterEach(() => {
  vi.restoreAllMocks();
});

describe('RetryPolicy', () => {
  it('retries 408, 409, 429 and 5xx only', () => {
    const policy = new RetryPolicy();
    const statuses = [400, 401, 403, 404, 408, 409, 413, 422, 429, 500, 501, 502, 503, 504, 505, 529];
    const retryable = statuses.filter((status) => policy.retryDelay(answer(status), 0) !== undefined);
    expect(retryable).toEqual([408, 409, 429, 500, 501, 502, 503, 504, 505, 529]);
  });

  it('retries a failure before the first event, never once output arrived or after an abort', () => {
    const policy = new RetryPolicy();
    const overloaded = ApiError.fromStreamError({ error: { type: 'overloaded_error', message: 'busy' } }, undefined);
    const coded503 = ApiError.fromStreamError({ error: { code: '503', message: 'busy' } }, undefined);
    const invalid = ApiError.fromStreamError({ error: { code: 'invalid_request_error', message: 'no' } }, undefined);
    const decide = (error: Ai4tsError) => policy.retryDelay(error, 0) !== undefined;
    expect(decide(new ConnectionError('reset'))).toBe(true);
    expect(decide(new StreamIncompleteError('closed'))).toBe(true);
    expect(decide(new TimeoutError('first_token', 10))).toBe(true);
    expect(decide(overloaded)).toBe(true);
    expect(decide(coded503)).toBe(true);
    expect(decide(invalid)).toBe(false);
    expect(decide(new TimeoutError('headers', 10))).toBe(false);
    expect(decide(new TimeoutError('idle', 10))).toBe(false);
    expect(decide(new AbortError('stop'))).toBe(false);
    expect(decide(new ConnectionError('reset', { partial: 'Hel' }))).toBe(false);
  });

  it('stops at maxRetries: attempt n is retry n + 1', () => {
    const policy = new RetryPolicy({ maxRetries: 2 });
    expect([0, 1, 2, 3].map((attempt) => policy.retryDelay(answer(503), attempt) !== undefined)).toEqual([
      true,
      true,
      false,
      false,
    ]);
    expect(new RetryPolicy({ maxRetries: 0 }).retryDelay(answer(503), 0)).toBeUndefined();
    expect(new RetryPolicy().maxRetries).toBe(2);
  });

  it('backs off exponentially with up to 25% jitter, capped', () => {
    const policy = new RetryPolicy({ maxRetries: 10 });
    for (let attempt = 0; attempt < 8; attempt++) {
      const nominal = Math.min(500 * 2 ** attempt, 8000);
      for (let i = 0; i < 50; i++) {
        const delay = policy.retryDelay(answer(503), attempt) as number;
        expect(delay).toBeGreaterThan(nominal * 0.75 - 1e-9);
        expect(delay).toBeLessThanOrEqual(nominal);
      }
    }
    expect(policy.backoff).toEqual({ initialMs: 500, maxMs: 8000 });
    expect(new RetryPolicy({ maxRetries: 5, backoff: { initialMs: 1, maxMs: 4 } }).retryDelay(answer(503), 3)).toBeLessThanOrEqual(4);
  });

  it('takes its jitter bounds exactly: the nominal wait at random 0, a quarter less at random 1', () => {
    const policy = new RetryPolicy({ maxRetries: 5, backoff: { initialMs: 100, maxMs: 1000 } });
    vi.spyOn(Math, 'random').mockReturnValue(0);
    expect([0, 1, 2, 3, 4].map((attempt) => policy.retryDelay(answer(500), attempt))).toEqual([100, 200, 400, 800, 1000]);
    vi.spyOn(Math, 'random').mockReturnValue(1);
    expect([0, 1, 2, 3, 4].map((attempt) => policy.retryDelay(answer(500), attempt))).toEqual([75, 150, 300, 600, 750]);
  });

  it('prefers the server hint: retry-after-ms, then Retry-After seconds or date; too long means no retry', () => {
    const policy = new RetryPolicy();
    expect(policy.retryDelay(answer(429, { 'retry-after-ms': '150', 'retry-after': '9' }), 0)).toBe(150);
    expect(policy.retryDelay(answer(429, { 'retry-after': '2' }), 0)).toBe(2000);
    const date = new Date(Date.now() + 30_000).toUTCString();
    const fromDate = policy.retryDelay(answer(503, { 'retry-after': date }), 0) as number;
    expect(fromDate).toBeGreaterThan(25_000);
    expect(fromDate).toBeLessThanOrEqual(30_000);
    expect(policy.retryDelay(answer(429, { 'retry-after': String(MAX_RETRY_AFTER_MS / 1000 + 1) }), 0)).toBeUndefined();
    const fallback = policy.retryDelay(answer(429, { 'retry-after': 'soon' }), 0) as number;
    expect(fallback).toBeGreaterThan(0);
    expect(fallback).toBeLessThanOrEqual(500);
  });

  it('honours a hint up to the cap exactly, and never for a status it does not retry', () => {
    const policy = new RetryPolicy();
    expect(policy.retryDelay(answer(503, { 'retry-after-ms': String(MAX_RETRY_AFTER_MS) }), 0)).toBe(MAX_RETRY_AFTER_MS);
    expect(policy.retryDelay(answer(503, { 'retry-after-ms': String(MAX_RETRY_AFTER_MS + 1) }), 0)).toBeUndefined();
    expect(policy.retryDelay(answer(400, { 'retry-after': '1' }), 0)).toBeUndefined();
  });

  it('is what Transport.streamRetry gives a call: its maxRetries and onRetry over the transport\'s, with its backoff', () => {
    const onRetry = () => undefined;
    const transport = new Transport({ maxRetries: 5, backoff: { initialMs: 1 } });
    const policy = transport.streamRetry({ maxRetries: 1, onRetry });
    expect(policy).toBeInstanceOf(RetryPolicy);
    expect(policy).toMatchObject({ maxRetries: 1, onRetry, backoff: { initialMs: 1, maxMs: 8000 } });
    expect(transport.streamRetry()).toMatchObject({ maxRetries: 5, onRetry: undefined });
    expect(new Transport().streamRetry().maxRetries).toBe(2);
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
