/**
 * @ai4ts/mcp: Model Context Protocol for ai4ts, on the official `@modelcontextprotocol/sdk`. `connectMcp` makes an MCP
 * server's tools tools of the loop of every protocol (`mcp: [client]` on a loop request, or `tools: await
 * client.tools()`); `serveMcp` serves ai4ts tools to MCP hosts over Streamable HTTP or stdio.
 */
export {
  connectMcp,
  McpClient,
  type McpCommonOptions,
  type McpConnectOptions,
  type McpHttpOptions,
  type McpStdioOptions,
  type McpToolsOptions,
} from './client.js';
export { fromMcpResult, toMcpResult } from './content.js';
export type { McpHttpGuardOptions } from './guard.js';
export { type ServedMcp, serveMcp, type ServeMcpOptions } from './server.js';
