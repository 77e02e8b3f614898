// The TypeScript SDK's client, in its default mode, against `hermes mcp serve` over stdio:
// lists the tools and calls one with plain callTool. Prints one JSON line: what it saw.
//   node ts_call.mjs TOOL ARGS_JSON -- COMMAND [ARG...]
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [tool, args, dash, command, ...rest] = process.argv.slice(2);
if (dash !== "--") throw new Error("usage: ts_call.mjs TOOL ARGS_JSON -- COMMAND [ARG...]");
const transport = new StdioClientTransport({ command, args: rest, env: process.env, stderr: "inherit" });
const client = new Client({ name: "ts-probe", version: "1.0.0" });
await client.connect(transport);
const listed = (await client.listTools()).tools.find((t) => t.name === tool);
const result = await client.callTool({ name: tool, arguments: JSON.parse(args) });
console.log(JSON.stringify({ protocol: transport.protocolVersion ?? null, listed: listed ?? null, result }));
await client.close();
