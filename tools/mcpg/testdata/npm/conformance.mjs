// Conformance check of mcpg against the official MCP TypeScript SDK.
//
//   node conformance.mjs stdio <command> [args...]   (env is passed through)
//   node conformance.mjs http <url> <token>
//
// Lists the tools, validates the result with the SDK's own zod schema,
// calls every tool plus one refused statement, and prints a JSON summary
// on stdout, including the o200k token count of the tools/list result.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ListToolsResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { encode } from "gpt-tokenizer";

const [mode, ...rest] = process.argv.slice(2);
let transport;
if (mode === "stdio") {
  transport = new StdioClientTransport({
    command: rest[0],
    args: rest.slice(1),
    env: process.env,
    stderr: "inherit",
  });
} else if (mode === "http") {
  transport = new StreamableHTTPClientTransport(new URL(rest[0]), {
    requestInit: { headers: { Authorization: `Bearer ${rest[1]}` } },
  });
} else {
  console.error("usage: conformance.mjs stdio CMD [ARGS...] | http URL TOKEN");
  process.exit(2);
}

const client = new Client({ name: "mcpg-conformance", version: "0" });
await client.connect(transport);
const summary = {
  server: client.getServerVersion(),
  protocolVersion: transport.protocolVersion ?? null,
};

// The raw tools/list result, validated by the SDK's schema (throws on error).
const raw = await client.request({ method: "tools/list", params: {} }, ListToolsResultSchema);
ListToolsResultSchema.parse(raw);
summary.tools = raw.tools.map((t) => t.name).sort();
summary.toolsListTokens = encode(JSON.stringify(raw)).length;
summary.schemasOK = raw.tools.every(
  (t) => t.inputSchema && t.inputSchema.type === "object" && typeof t.description === "string",
);

const calls = {
  run_select: { sql: "SELECT id, name FROM conformance.items WHERE id <= $1 ORDER BY id", params: [2] },
  list_schemas: {},
  list_tables: { schema: "conformance" },
  describe_table: { name: "conformance.items" },
  explain_query: { sql: "SELECT * FROM conformance.items WHERE id = 1" },
  refused: { tool: "run_select", args: { sql: "DELETE FROM conformance.items" } },
};
summary.calls = {};
for (const [key, spec] of Object.entries(calls)) {
  const name = spec.tool ?? key;
  const args = spec.tool ? spec.args : spec;
  const res = await client.callTool({ name, arguments: args });
  const text = (res.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("\n");
  summary.calls[key] = { isError: res.isError === true, contentItems: (res.content ?? []).length, text };
}
await client.close();
console.log(JSON.stringify(summary));
