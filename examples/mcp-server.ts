/**
 * A small MCP server over stdio, made of `defineTool` tools with `serveMcp`: what an MCP host (Claude Desktop, an
 * IDE, `examples/mcp-agent.ts`) starts as a command. No CLI of ours is needed; a host's configuration names this file:
 *
 *   { "mcpServers": { "ai4ts-example": { "command": "npx", "args": ["tsx", "/path/to/ai4ts/examples/mcp-server.ts"] } } }
 *
 * stdout carries the protocol, so this file never prints to it.
 */
import { serveMcp } from '@ai4ts/mcp';
import { convertTemperature, getWeather } from './tools.ts';

await serveMcp([getWeather, convertTemperature], { name: 'ai4ts-example', version: '0.1.0' }).connectStdio();
