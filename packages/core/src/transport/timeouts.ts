/**
 * The one timeout shape of a call: `{ headers, firstEvent, idle }`, in ms, `0` disabling a wait. Each wait is the
 * call's, else the transport's, else (for `firstEvent` and `idle`) the environment's `AI4TS_FIRST_TOKEN_TIMEOUT_MS` /
 * `AI4TS_IDLE_TIMEOUT_MS`, read when the request is sent, else {@link DEFAULT_TIMEOUTS}. At each level a `timeouts`
 * field wins over the deprecated `timeout` / `firstTokenTimeout` / `idleTimeout` it replaces.
 */
import { Ai4tsError } from '../errors.js';
import { readEnv } from './env.js';

/** How long each wait of a call may last, in ms; `0` disables one. */
export interface Timeouts {
  /** Until the response headers arrive (a stall: `TimeoutError` phase `headers`). */
  headers?: number;
  /** From the headers until the first SSE event (phase `first_token`). */
  firstEvent?: number;
  /** Between two SSE events (phase `idle`). */
  idle?: number;
}

/**
 * The waits when nothing sets them. Headers: 10 minutes, as a long non-streamed answer may take. First event and
 * idle: 60 s, twice AI4J's 30 s, since a reasoning model (o-series, DeepSeek R1, Claude with extended thinking) can
 * think that long without streaming anything, and a dead stream still fails within a minute.
 */
export const DEFAULT_TIMEOUTS: Readonly<Required<Timeouts>> = { headers: 600_000, firstEvent: 60_000, idle: 60_000 };

/** The timeout fields of `TransportOptions` and `RequestOptions`. */
export interface TimeoutOptions {
  /** Each wait of a call in ms, `0` disabling one: see {@link Timeouts} and {@link DEFAULT_TIMEOUTS}. */
  timeouts?: Timeouts;
  /** @deprecated Use `timeouts.headers`, which wins when both are set. */
  timeout?: number;
  /** @deprecated Use `timeouts.firstEvent`, which wins when both are set. */
  firstTokenTimeout?: number;
  /** @deprecated Use `timeouts.idle`, which wins when both are set. */
  idleTimeout?: number;
}

/** The waits of one call, in ms; undefined means none. */
export interface ResolvedTimeouts {
  headers: number | undefined;
  firstEvent: number | undefined;
  idle: number | undefined;
}

/** Each wait's deprecated option, read when its `timeouts` field is not set. */
const DEPRECATED = { headers: 'timeout', firstEvent: 'firstTokenTimeout', idle: 'idleTimeout' } as const;
const ENV = { headers: undefined, firstEvent: 'AI4TS_FIRST_TOKEN_TIMEOUT_MS', idle: 'AI4TS_IDLE_TIMEOUT_MS' } as const;

/**
 * The waits a call would use (see the module comment).
 *
 * @throws Ai4tsError when an environment variable is not a number of ms.
 */
export function resolveTimeouts(call: TimeoutOptions, transport: TimeoutOptions): ResolvedTimeouts {
  return {
    headers: resolveTimeout('headers', call, transport),
    firstEvent: resolveTimeout('firstEvent', call, transport),
    idle: resolveTimeout('idle', call, transport),
  };
}

/** One wait of a call: the environment is read only when neither the call nor the transport sets it. */
export function resolveTimeout(
  phase: keyof Timeouts,
  call: TimeoutOptions,
  transport: TimeoutOptions,
): number | undefined {
  const set = (options: TimeoutOptions) => options.timeouts?.[phase] ?? options[DEPRECATED[phase]];
  const ms = set(call) ?? set(transport) ?? envMs(ENV[phase]) ?? DEFAULT_TIMEOUTS[phase];
  return ms > 0 ? ms : undefined;
}

function envMs(name: string | undefined): number | undefined {
  if (name === undefined) return undefined;
  const text = readEnv([name]);
  if (text === undefined) return undefined;
  const ms = Number(text);
  // A typo must not silently mean "no timeout" or the default.
  if (!Number.isFinite(ms) || ms < 0) throw new Ai4tsError(`${name} must be a number of ms (0 disables), not "${text}"`);
  return ms;
}

/** @deprecated The stream waits under their old names: use {@link ResolvedTimeouts}. */
export interface StreamTimeouts {
  firstTokenTimeout: number | undefined;
  idleTimeout: number | undefined;
}

/** @deprecated Use {@link resolveTimeouts}: the same waits, headers included, under the new names. */
export function resolveStreamTimeouts(call: TimeoutOptions, transport: TimeoutOptions): StreamTimeouts {
  return {
    firstTokenTimeout: resolveTimeout('firstEvent', call, transport),
    idleTimeout: resolveTimeout('idle', call, transport),
  };
}

/** @deprecated Use `DEFAULT_TIMEOUTS.firstEvent`. */
export const DEFAULT_FIRST_TOKEN_TIMEOUT = DEFAULT_TIMEOUTS.firstEvent;
/** @deprecated Use `DEFAULT_TIMEOUTS.idle`. */
export const DEFAULT_IDLE_TIMEOUT = DEFAULT_TIMEOUTS.idle;
