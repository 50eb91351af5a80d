import { writeFile } from 'node:fs/promises';
import { stringify } from 'yaml';
import { capabilitiesForTools } from '../mcp/capability-manifests.js';
import { SERVER_NAME } from '../mcp/tool-capability.js';
import { failureText } from '../mcp/failure-text.js';
import { UpstreamSession } from '../mcp/upstream-session.js';
import { parseCommandLine, runCommand, UsageError } from './command-line.js';
import { urlOf } from './url-arg.js';
import { VERSION } from './version.js';

const HELP = `Usage: arbiter mcp import URL --server NAME [--out FILE] [--header 'NAME: VALUE']...
                         [--timeout S]

Reads the tools/list of the Streamable HTTP MCP server at URL and writes a Capability
manifest for each tool: capability mcp.NAME.<tool> (the name the tool proxy proposes
with --mcp-server NAME=URL), the tool's description, its inputSchema as parameterSchema,
and a risk level from its annotations (readOnlyHint: low, destructiveHint: high,
otherwise medium). Review them, grant them, and commit them.

  --server NAME        the upstream's name, as in --mcp-server NAME=URL ([a-z][a-z0-9_-]*)
  --out FILE           write the manifests to FILE instead of standard output
  --header 'N: V'      send this HTTP header to the server (e.g. its Authorization); repeatable
  --timeout S          bound on connecting and listing (default: 30)
Exit status: 0 written, 1 the server could not be read, 2 usage error.
`;

export function runMcpImport(argv: string[]): Promise<number> {
  return runCommand(HELP, () => parseOptions(argv), importCapabilities);
}

async function importCapabilities(options: ImportOptions): Promise<number> {
  const upstream = new UpstreamSession(
    { name: options.server, url: options.url },
    options.timeoutMs,
    VERSION,
    { headers: options.headers },
  );
  let tools;
  try {
    tools = await upstream.listTools();
  } catch (err) {
    process.stderr.write(
      `arbiter mcp import: cannot list the tools of ${options.url.href}: ${failureText(err)}\n`,
    );
    return 1;
  } finally {
    await upstream.close();
  }
  const { manifests, skipped } = capabilitiesForTools(options.server, tools);
  for (const { tool, reason } of skipped)
    process.stderr.write(`arbiter mcp import: skipped tool "${tool}": ${reason}\n`);
  const header =
    `# Capabilities of the MCP server "${options.server}" (${manifests.length} tools), written by\n` +
    `# arbiter mcp import. Risk levels come from the tools' own annotations: review them.\n`;
  const yaml = header + manifests.map((m) => stringify(m, { lineWidth: 0 })).join('---\n');
  if (options.out) {
    await writeFile(options.out, yaml);
    process.stderr.write(`arbiter mcp import: wrote ${manifests.length} capabilities to ${options.out}\n`);
  } else process.stdout.write(yaml);
  return 0;
}

interface ImportOptions {
  url: URL;
  server: string;
  out: string | undefined;
  headers: Record<string, string>;
  timeoutMs: number;
}

function parseOptions(argv: string[]): ImportOptions | 'help' {
  const { values, positionals } = parseCommandLine(argv, {
    server: { type: 'string' },
    out: { type: 'string' },
    header: { type: 'string', multiple: true },
    timeout: { type: 'string', default: '30' },
    help: { type: 'boolean', short: 'h' },
  });
  if (values.help) return 'help';
  if (positionals.length !== 1) throw new UsageError('name the MCP server URL');
  const url = httpUrl(positionals[0]!);
  if (!values.server) throw new UsageError('--server NAME is required');
  if (!SERVER_NAME.test(values.server))
    throw new UsageError(`--server: "${values.server}" is not a name of [a-z][a-z0-9_-]*`);
  const seconds = Number(values.timeout);
  if (!Number.isFinite(seconds) || seconds <= 0)
    throw new UsageError(`--timeout: ${values.timeout} is not a number of seconds`);
  const headers = headersOf(values.header ?? []);
  return { url, server: values.server, out: values.out, headers, timeoutMs: seconds * 1000 };
}

function httpUrl(raw: string): URL {
  const url = urlOf(raw);
  if (url?.protocol !== 'http:' && url?.protocol !== 'https:')
    throw new UsageError(`"${raw}" is not an http(s) URL`);
  return url;
}

/** `--header 'NAME: VALUE'` flags as fetch headers. */
function headersOf(flags: string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const raw of flags) {
    const colon = raw.indexOf(':');
    if (colon <= 0) throw new UsageError(`--header: "${raw}" is not NAME: VALUE`);
    headers[raw.slice(0, colon).trim()] = raw.slice(colon + 1).trim();
  }
  return headers;
}
