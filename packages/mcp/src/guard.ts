/**
 * What every HTTP request to `serveMcp` passes before any JSON-RPC runs: its Host and Origin (DNS rebinding, which
 * the MCP spec requires servers to stop), then the bearer token and the `authenticate` hook. The SDK's transport
 * options for the first (`allowedHosts`, `allowedOrigins`) are deprecated, compare the Host with its port and read
 * a header a fetch-style `Request` does not carry, so the check is the SDK's Express middleware's
 * (`hostHeaderValidation`: hostnames, any port, localhost by default) applied to the request URL.
 */
import { sameText } from '@ai4ts/core/internal';

/** What the SDK's `localhostHostValidation` allows: this machine's names. */
const LOCALHOST: readonly string[] = ['localhost', '127.0.0.1', '[::1]'];

/** Who may reach a served MCP server over HTTP. */
export interface McpHttpGuardOptions {
  /**
   * Hostnames (no port; IPv6 in brackets, `[::1]`) the server answers to; a request for another gets 403. Default:
   * `localhost`, `127.0.0.1`, `[::1]`. A server reached by another name (a LAN address, a public host) lists it here.
   */
  allowedHosts?: readonly string[];
  /**
   * Origins (`https://app.example.com`) whose pages may call the server; a request with another `Origin` gets 403,
   * one without (not from a browser) is not checked. Default: pages of `localhost`, `127.0.0.1`, `[::1]`, any port.
   */
  allowedOrigins?: readonly string[];
  /** Tokens accepted as `Authorization: Bearer <token>`; without one the answer is 401 with `WWW-Authenticate`. */
  bearerToken?: string | readonly string[];
  /** Decides, after the checks above, whether a request may go on; `false` is a 401. Sees every request. */
  authenticate?: (request: Request) => boolean | Promise<boolean>;
}

/** Checks requests against {@link McpHttpGuardOptions}: a refusal as a Response, or undefined to go on. */
export class McpHttpGuard {
  readonly #hosts: readonly string[];
  readonly #origins: readonly string[] | undefined;
  readonly #tokens: readonly string[] | undefined;
  readonly #authenticate: McpHttpGuardOptions['authenticate'];

  constructor({ allowedHosts, allowedOrigins, bearerToken, authenticate }: McpHttpGuardOptions) {
    this.#hosts = (allowedHosts ?? LOCALHOST).map((host) => host.toLowerCase());
    this.#origins = allowedOrigins && [...allowedOrigins];
    this.#tokens = bearerToken === undefined ? undefined : typeof bearerToken === 'string' ? [bearerToken] : [...bearerToken];
    if (this.#tokens?.some((token) => token === '')) throw new TypeError('serveMcp: a bearerToken may not be empty');
    this.#authenticate = authenticate;
  }

  async check(request: Request): Promise<Response | undefined> {
    const { hostname } = new URL(request.url);
    if (!this.#hosts.includes(hostname)) return jsonRpcError(403, -32000, `Invalid Host: ${hostname}`);
    const origin = request.headers.get('origin');
    if (origin !== null && !this.#originAllowed(origin)) return jsonRpcError(403, -32000, `Invalid Origin: ${origin}`);
    if (this.#tokens) {
      const header = request.headers.get('authorization');
      const token = /^Bearer\s+(.+)$/i.exec(header ?? '')?.[1]?.trim();
      let accepted = false;
      for (const expected of this.#tokens) accepted = sameText(expected, token ?? '') || accepted;
      // RFC 6750: a request without credentials gets the bare challenge, a wrong token `invalid_token`.
      if (!accepted) return unauthorized(token === undefined ? 'Bearer' : 'Bearer error="invalid_token"');
    }
    if (this.#authenticate && !(await this.#authenticate(request))) return unauthorized('Bearer');
    return undefined;
  }

  #originAllowed(origin: string): boolean {
    if (this.#origins) return this.#origins.includes(origin);
    const url = URL.canParse(origin) ? new URL(origin) : undefined;
    return (url?.protocol === 'http:' || url?.protocol === 'https:') && LOCALHOST.includes(url.hostname);
  }
}

/** A JSON-RPC error without an id, as the SDK's transports answer requests they refuse. */
export function jsonRpcError(status: number, code: number, message: string, headers?: HeadersInit): Response {
  return Response.json({ jsonrpc: '2.0', error: { code, message }, id: null }, { status, ...(headers ? { headers } : {}) });
}

/** A 401 that names no token, sent or expected. */
function unauthorized(challenge: string): Response {
  return jsonRpcError(401, -32000, 'Unauthorized', { 'www-authenticate': challenge });
}

