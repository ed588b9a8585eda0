/**
 * An MCP client whose server's tools join the tool loop of every protocol. Built on the official SDK's `Client`
 * and transports: stdio (the server a child process of this one) and Streamable HTTP, falling back to the older
 * HTTP+SSE transport for servers that only speak that.
 */
import {
  Ai4tsError,
  ConnectionError,
  type Logger,
  type Tool,
  type ToolContext,
  type ToolSource,
} from '@ai4ts/core';
import { isRecord, truncate } from '@ai4ts/core/internal';
import { defineJsonSchemaTool } from '@ai4ts/core/json-schema';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  type CallToolResult,
  McpError,
  type Tool as McpTool,
  ToolListChangedNotificationSchema,
  ToolSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { CfWorkerJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/cfworker-provider.js';
import * as z from 'zod';
import { fromMcpResult } from './content.js';

/** A server started as a child process, spoken to over its stdin and stdout. */
export interface McpStdioOptions extends McpCommonOptions {
  command: string;
  args?: string[];
  /** Added to the safe variables the SDK passes on (`HOME`, `PATH`, ...); the rest of this process's env is not. */
  env?: Record<string, string>;
  cwd?: string;
  /** Where the server's stderr goes: this process's (`'inherit'`, the default), nowhere (`'ignore'`). */
  stderr?: 'inherit' | 'ignore';
}

/** A server reached over HTTP: Streamable HTTP, or HTTP+SSE when the server answers the first POST with a 4xx. */
export interface McpHttpOptions extends McpCommonOptions {
  url: string | URL;
  /** Sent with every request (an `Authorization` header, for example). */
  headers?: Record<string, string>;
}

/** Options of every transport. */
export interface McpCommonOptions {
  /** The name this client gives the server (`clientInfo.name`); "ai4ts" by default. */
  clientName?: string;
  /**
   * Milliseconds a tool call may run before it fails and is cancelled, and a `tools/list` page may take (60 000 by
   * default, the SDK's own default).
   */
  timeout?: number;
  /** The most `tools/list` pages read in one listing (100 by default); a server that pages on gets a warning. */
  maxListPages?: number;
  /** The most tools kept from one listing (1,000 by default); the rest are left out with a warning. */
  maxTools?: number;
  /**
   * Where warnings about the server's tools go (a tool dropped as malformed, a name made unique, a listing cut
   * short): its `warn`. `console` by default.
   */
  logger?: Logger;
}

/** What {@link connectMcp} takes: a command (stdio) or a URL (HTTP). */
export type McpConnectOptions = McpStdioOptions | McpHttpOptions;

/** Which of a server's tools {@link McpClient.tools} returns, and under which names. */
export interface McpToolsOptions {
  /** Put before every tool's name (to tell two servers' tools apart): `prefix: 'github_'`. */
  prefix?: string;
  /** Only these tools (the server's names). */
  include?: readonly string[];
  /** All but these tools (the server's names). */
  exclude?: readonly string[];
}

const DEFAULT_TIMEOUT_MS = 60_000;
const DEFAULT_MAX_LIST_PAGES = 100;
const DEFAULT_MAX_TOOLS = 1_000;

/**
 * One `tools/list` page, read leniently: the SDK's `listTools` rejects the whole listing when one tool is malformed,
 * so each tool is checked on its own (with the SDK's `ToolSchema`) and a bad one is dropped by name.
 */
const ToolPageSchema = z.looseObject({ tools: z.array(z.unknown()), nextCursor: z.string().optional() });

/** A tool as listed, with the check of its structured results when it declares an `outputSchema`. */
interface ListedTool {
  tool: McpTool;
  checkOutput: ((structured: unknown) => string | undefined) | undefined;
}

/**
 * Connects to an MCP server and resolves once the MCP handshake is done.
 *
 * @throws (rejects with) ConnectionError when the server cannot be started or reached, or the handshake fails.
 *
 * @example
 * await using mcp = await connectMcp({ command: 'npx', args: ['-y', '@modelcontextprotocol/server-everything'] });
 * const result = await client.chat.create({ model, messages, mcp: [mcp] });
 */
export async function connectMcp(options: McpConnectOptions): Promise<McpClient> {
  const client = new McpClient(options);
  await client.connect();
  return client;
}

/**
 * A connection to one MCP server. Its tools are JSON-Schema tools (validated before they reach the server), usable
 * in `tools` beside `defineTool` ones or through the request's `mcp` field, which lists them again before each
 * step. A dropped connection (a crashed stdio server, a lost HTTP session) fails the calls in flight as error
 * results and is opened again by the next call. `close()` (or `await using`) ends it and a stdio server with it.
 */
export class McpClient implements ToolSource, AsyncDisposable {
  readonly #options: McpConnectOptions;
  /** The open connection, or the one being opened; undefined when none is (never opened, dropped or closed). */
  #connection: Promise<Client> | undefined;
  /** The client of `#connection` once open. */
  #client: Client | undefined;
  /** The server's tools as last listed; undefined until listed and after `list_changed` or a reconnect. */
  #listed: Promise<ListedTool[]> | undefined;
  /** The default view ({@link tools} without options) of `#listed`, so each step need not build validators again. */
  #defaultTools: { from: Promise<ListedTool[]>; tools: Promise<Tool[]> } | undefined;
  /** Checks structured results against a tool's `outputSchema`, as the SDK's `listTools` would have set up. */
  readonly #validator = new CfWorkerJsonSchemaValidator();
  #closed = false;

  /** @throws RangeError when `timeout`, `maxListPages` or `maxTools` is not a positive number (an integer for the two). */
  constructor(options: McpConnectOptions) {
    const { timeout, maxListPages, maxTools } = options;
    if (timeout !== undefined && !(timeout > 0)) throw new RangeError('MCP timeout must be > 0 ms');
    for (const [name, value] of Object.entries({ maxListPages, maxTools }))
      if (value !== undefined && !(Number.isInteger(value) && value > 0))
        throw new RangeError(`MCP ${name} must be a positive integer`);
    this.#options = options;
  }

  /** Opens the connection if none is open. Called by {@link connectMcp} and, after a drop, by the next call. */
  connect(): Promise<Client> {
    if (this.#closed) return Promise.reject(new Ai4tsError(`MCP server ${this.#label()}: the client is closed`));
    this.#connection ??= this.#open().catch((error: unknown) => {
      this.#connection = undefined;
      throw new ConnectionError(`MCP server ${this.#label()}: could not connect: ${messageOf(error)}`, {
        cause: error,
      });
    });
    return this.#connection;
  }

  /**
   * The server's tools as ai4ts tools, listed when first asked and again after the server says the list changed.
   * Names are the server's (with `prefix`), any character a model API refuses replaced by `_`, cut to 64; two that
   * end up alike are told apart by a suffix (`_2`, `_3`...) with a warning, and calls still go to the server's name.
   * A malformed tool is left out with a warning naming it; the listing stops at `maxListPages`, `maxTools` or a
   * repeated cursor, with a warning.
   *
   * @throws (rejects with) ConnectionError when the server cannot be reached or its answer is no tool list at all.
   */
  async tools(options: McpToolsOptions = {}): Promise<Tool[]> {
    const listed = this.#list();
    if (options.prefix === undefined && options.include === undefined && options.exclude === undefined) {
      if (this.#defaultTools?.from !== listed) this.#defaultTools = { from: listed, tools: this.#toTools(listed, {}) };
      return [...(await this.#defaultTools.tools)];
    }
    return this.#toTools(listed, options);
  }

  /** Ends the connection (and a stdio server's process). Idempotent. */
  async close(): Promise<void> {
    this.#closed = true;
    const connection = this.#connection;
    this.#connection = undefined;
    this.#client = undefined;
    this.#listed = undefined;
    await connection?.then((client) => client.close(), () => {});
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  async #toTools(listed: Promise<ListedTool[]>, { prefix = '', include, exclude }: McpToolsOptions): Promise<Tool[]> {
    const chosen = (await listed).filter(
      ({ tool }) => (include === undefined || include.includes(tool.name)) && !exclude?.includes(tool.name),
    );
    const timeout = this.#options.timeout ?? DEFAULT_TIMEOUT_MS;
    const names = uniqueToolNames(chosen.map(({ tool }) => tool.name), prefix);
    return chosen.map((listedTool, index) => {
      const { tool } = listedTool;
      const wanted = toolName(prefix + tool.name);
      const name = names[index] ?? wanted;
      if (name !== wanted) this.#warn(`tool "${tool.name}" is called "${name}": "${wanted}" is taken`, tool.name);
      // The listing checked the schema (an object schema, as MCP requires) and the options their numbers.
      return defineJsonSchemaTool({
        name,
        ...(tool.description === undefined ? {} : { description: tool.description }),
        parameters: tool.inputSchema,
        timeout,
        execute: (args, context) => this.#call(listedTool, args, context, timeout),
      });
    });
  }

  #list(): Promise<ListedTool[]> {
    if (this.#listed) return this.#listed;
    const listed = this.connect()
      .then((client) => this.#listPages(client))
      .catch((error: unknown) => {
        if (error instanceof ConnectionError) throw error;
        throw new ConnectionError(`MCP server ${this.#label()}: could not list its tools: ${messageOf(error)}`, {
          cause: error,
        });
      });
    this.#listed = listed;
    listed.catch(() => {
      if (this.#listed === listed) this.#listed = undefined;
    });
    return listed;
  }

  /** Reads `tools/list` page by page, within the page, tool and cursor bounds; each tool checked on its own. */
  async #listPages(client: Client): Promise<ListedTool[]> {
    const { timeout = DEFAULT_TIMEOUT_MS, maxListPages = DEFAULT_MAX_LIST_PAGES, maxTools = DEFAULT_MAX_TOOLS } = this.#options;
    const tools: ListedTool[] = [];
    const cursors = new Set<string>();
    let cursor: string | undefined;
    let index = 0;
    for (let pages = 1; ; pages++) {
      const params = cursor === undefined ? {} : { cursor };
      // Read as any JSON, then checked here, so a malformed page is named in this package's words.
      const answer = await client.request({ method: 'tools/list', params }, z.unknown(), { timeout });
      const read = ToolPageSchema.safeParse(answer);
      if (!read.success)
        throw new ConnectionError(`MCP server ${this.#label()}: could not list its tools: the answer is no tool list: ${issuesOf(read.error)}`);
      const page = read.data;
      for (const entry of page.tools) {
        index++;
        const parsed = ToolSchema.safeParse(entry);
        if (parsed.success) tools.push({ tool: parsed.data, checkOutput: this.#outputCheck(parsed.data) });
        else {
          const name = isRecord(entry) && typeof entry.name === 'string' ? entry.name : undefined;
          const which = name === undefined ? `#${index}` : `"${name}"`;
          this.#warn(`tool ${which} dropped: ${issuesOf(parsed.error)}`, name);
        }
      }
      if (tools.length > maxTools) {
        this.#warn(`the server lists more than ${maxTools} tools (maxTools); kept the first ${maxTools}`);
        return tools.slice(0, maxTools);
      }
      cursor = page.nextCursor;
      if (cursor === undefined) return tools;
      if (cursors.has(cursor)) {
        this.#warn(`tools/list repeated the cursor "${truncate(cursor, 100)}"; the listing ends there`);
        return tools;
      }
      if (pages >= maxListPages) {
        this.#warn(`tools/list stopped after ${maxListPages} pages (maxListPages); the server offers more`);
        return tools;
      }
      cursors.add(cursor);
    }
  }

  /** The check of a tool's structured results, when it declares an `outputSchema` (MCP requires them to match). */
  #outputCheck(tool: McpTool): ListedTool['checkOutput'] {
    const schema = tool.outputSchema;
    if (schema === undefined) return undefined;
    let validate: ReturnType<CfWorkerJsonSchemaValidator['getValidator']> | undefined;
    return (structured) => {
      try {
        validate ??= this.#validator.getValidator(schema);
        const { valid, errorMessage } = validate(structured);
        return valid ? undefined : `its structured result does not match the tool's output schema: ${errorMessage}`;
      } catch (error) {
        return `its output schema cannot be evaluated: ${messageOf(error)}`;
      }
    };
  }

  /** Calls a tool; the tool's signal cancels the request (the SDK sends `notifications/cancelled`). */
  async #call({ tool, checkOutput }: ListedTool, args: Record<string, unknown>, context: ToolContext, timeout: number) {
    const { name } = tool;
    const client = await this.connect();
    let result: CallToolResult;
    try {
      result = (await client.callTool({ name, arguments: args }, undefined, {
        signal: context.signal,
        // ai4ts's timeout (the tool's) fires first and cancels; the SDK's is a backstop.
        timeout: timeout + 1_000,
        onprogress: ({ progress, total, message }) =>
          context.progress({
            progress,
            ...(total === undefined ? {} : { total }),
            ...(message === undefined ? {} : { message }),
          }),
      })) as CallToolResult;
    } catch (error) {
      // An McpError is the server's answer (or, over stdio, a closed pipe, which `onclose` handles). Anything else
      // is the transport failing (a refused connection, a session the server no longer knows): start afresh.
      if (!context.signal.aborted && !(error instanceof McpError)) this.#drop(client);
      throw new Ai4tsError(`MCP server ${this.#label()}: ${messageOf(error)}`, { cause: error });
    }
    if (checkOutput && !result.isError) {
      const problem =
        result.structuredContent === undefined
          ? "it has an output schema, and its result holds no structured content"
          : checkOutput(result.structuredContent);
      if (problem !== undefined) throw new Ai4tsError(`MCP server ${this.#label()}: tool "${name}": ${problem}`);
    }
    return fromMcpResult(result);
  }

  async #open(): Promise<Client> {
    const options = this.#options;
    const client = this.#newClient();
    if ('command' in options) {
      const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');
      await this.#attach(
        client,
        new StdioClientTransport({
          command: options.command,
          ...(options.args === undefined ? {} : { args: options.args }),
          ...(options.env === undefined ? {} : { env: options.env }),
          ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
          stderr: options.stderr ?? 'inherit',
        }),
      );
      return client;
    }
    const url = new URL(options.url);
    const requestInit = options.headers === undefined ? {} : { requestInit: { headers: options.headers } };
    const { StreamableHTTPClientTransport, StreamableHTTPError } = await import(
      '@modelcontextprotocol/sdk/client/streamableHttp.js'
    );
    try {
      await this.#attach(client, new StreamableHTTPClientTransport(url, requestInit));
      return client;
    } catch (error) {
      // A server of the older HTTP+SSE transport refuses the POST of the handshake (404 or 405).
      const refused = error instanceof StreamableHTTPError && error.code !== undefined && error.code >= 400 && error.code < 500;
      if (!refused) throw error;
    }
    const { SSEClientTransport } = await import('@modelcontextprotocol/sdk/client/sse.js');
    const fallback = this.#newClient();
    await this.#attach(fallback, new SSEClientTransport(url, requestInit));
    return fallback;
  }

  #newClient(): Client {
    const client = new Client(
      { name: this.#options.clientName ?? 'ai4ts', version: '0.1.0' },
      // The SDK validates structured results against a tool's outputSchema; cfworker's validator needs no eval.
      { capabilities: {}, jsonSchemaValidator: new CfWorkerJsonSchemaValidator() },
    );
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      this.#listed = undefined;
    });
    return client;
  }

  /** Connects `client` over `transport`; when that connection drops, the next call opens a new one. */
  async #attach(client: Client, transport: Transport): Promise<void> {
    await client.connect(transport);
    this.#client = client;
    client.onclose = () => this.#drop(client);
  }

  /** Forgets `client` if it is the open one, so the next call connects again, and closes it. */
  #drop(client: Client): void {
    if (this.#client !== client) return;
    this.#client = undefined;
    this.#connection = undefined;
    this.#listed = undefined;
    client.close().catch(() => {});
  }

  /** Tells the logger (console by default) what was done to the server's tools; a broken logger changes nothing. */
  #warn(message: string, tool?: string): void {
    const label = this.#label();
    try {
      (this.#options.logger ?? console).warn(`ai4ts: MCP server ${label}: ${message}`, {
        server: label,
        ...(tool === undefined ? {} : { tool }),
      });
    } catch {
      // A warning must not break the listing it reports on.
    }
  }

  #label(): string {
    const options = this.#options;
    return 'command' in options ? `"${options.command}"` : `at ${redactUrl(options.url)}`;
  }
}

/** A tool name every protocol accepts: `[a-zA-Z0-9_-]`, 1 to 64 characters. */
function toolName(name: string): string {
  return name.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 64) || '_';
}

/** zod's issues on one line, without its bullets. */
function issuesOf(error: z.ZodError): string {
  return z.prettifyError(error).replace(/✖\s*/g, '').replace(/\n\s*/g, '; ');
}

/**
 * The names of `names` (the server's, after `prefix`) as tools: model-safe and unique. A name that sanitising leaves
 * unchanged keeps it (first come); any other that lands on a taken name gets the first free suffix `_2`, `_3`...
 */
function uniqueToolNames(names: readonly string[], prefix: string): string[] {
  const taken = new Set<string>();
  const unique: (string | undefined)[] = names.map((name) => {
    const safe = toolName(prefix + name);
    if (toolName(name) !== name || taken.has(safe)) return undefined;
    taken.add(safe);
    return safe;
  });
  return names.map((name, index) => {
    const kept = unique[index];
    if (kept !== undefined) return kept;
    const safe = toolName(prefix + name);
    let candidate = safe;
    for (let n = 2; taken.has(candidate); n++) candidate = `${safe.slice(0, 64 - `_${n}`.length)}_${n}`;
    taken.add(candidate);
    return candidate;
  });
}

/** The URL without credentials or a query (which may hold a key). */
function redactUrl(url: string | URL): string {
  const parsed = new URL(url);
  return `${parsed.origin}${parsed.pathname}`;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
