import { writeFile } from 'node:fs/promises';
import { stringify } from 'yaml';
import type { Tool } from '@modelcontextprotocol/server';
import { capabilitiesForTools } from '../mcp/capability-manifests.js';
import { diffDefinitions, formatDefinitionDiff, isUnchanged } from '../mcp/definition-diff.js';
import type { CapabilityObject } from '../model/index.js';
import { readLocatedManifests } from '../sources/located-manifests.js';
import { SERVER_NAME } from '../mcp/tool-capability.js';
import { failureText } from '../mcp/failure-text.js';
import { UpstreamSession } from '../mcp/upstream-session.js';
import { parseCommandLine, runCommand, UsageError } from './command-line.js';
import { urlOf } from './url-arg.js';
import { VERSION } from './version.js';

const HELP = `Usage: arbiter mcp import URL --server NAME [--out FILE | --diff PATH]
                         [--header 'NAME: VALUE']... [--timeout S]

Reads the tools/list of the Streamable HTTP MCP server at URL and writes a Capability
manifest for each tool: capability mcp.NAME.<tool> (the name the tool proxy proposes
with --mcp-server NAME=URL), the tool's description, its inputSchema as parameterSchema,
a risk level from its annotations (readOnlyHint: low, destructiveHint: high, otherwise
medium), and spec.mcp: the tool pinned to the digest of its definition. Review them,
grant them, and commit them. The tool proxy hides and refuses a tool whose definition
no longer matches its pin.

  --server NAME        the upstream's name, as in --mcp-server NAME=URL ([a-z][a-z0-9_-]*)
  --out FILE           write the manifests to FILE instead of standard output
  --diff PATH          write nothing; compare the tools with the capabilities of NAME in
                       PATH (the manifests written before: a file or a folder) and print
                       the new, removed and changed tools, with the digests and what the
                       manifests would change
  --header 'N: V'      send this HTTP header to the server (e.g. its Authorization); repeatable
  --timeout S          bound on connecting and listing (default: 30)
Exit status: 0 written, 1 the server could not be read, 2 usage error.
With --diff, as diff(1): 0 every tool is as pinned, 1 something changed, 2 trouble (usage,
the server or PATH could not be read).
`;

export function runMcpImport(argv: string[]): Promise<number> {
  return runCommand(HELP, () => parseOptions(argv), importCapabilities);
}

async function importCapabilities(options: ImportOptions): Promise<number> {
  const pinned = options.diff === undefined ? undefined : await pinnedCapabilities(options.diff);
  const tools = await listTools(options);
  if (!tools) return pinned ? DIFF_TROUBLE : 1;
  if (pinned) return showDiff(options, pinned, tools);
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

const DIFF_TROUBLE = 2;

/** The tools the server lists; undefined (said why) when it cannot be read. */
async function listTools(options: ImportOptions): Promise<Tool[] | undefined> {
  const upstream = new UpstreamSession(
    { name: options.server, url: options.url },
    options.timeoutMs,
    VERSION,
    { headers: options.headers },
  );
  try {
    return await upstream.listTools();
  } catch (err) {
    process.stderr.write(
      `arbiter mcp import: cannot list the tools of ${options.url.href}: ${failureText(err)}\n`,
    );
    return undefined;
  } finally {
    await upstream.close();
  }
}

/** The Capabilities of the manifests at `path`; a usage error when they cannot be read. */
async function pinnedCapabilities(path: string): Promise<CapabilityObject[]> {
  let read;
  try {
    read = await readLocatedManifests([path]);
  } catch (err) {
    throw new UsageError(
      `--diff: cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? failureText(err)}`,
    );
  }
  const [problem] = read.problems;
  if (problem) throw new UsageError(`--diff: ${problem.file}:${problem.line}: ${problem.message}`);
  return read.objects
    .map((object) => object.raw as CapabilityObject)
    .filter((raw) => raw.kind === 'Capability' && typeof raw.spec?.name === 'string');
}

function showDiff(options: ImportOptions, pinned: CapabilityObject[], tools: Tool[]): number {
  const diff = diffDefinitions(options.server, pinned, tools);
  const where = options.diff!;
  if (isUnchanged(diff)) {
    process.stderr.write(
      `arbiter mcp import: the ${tools.length} tools of "${options.server}" are as pinned in ${where}\n`,
    );
    return 0;
  }
  process.stdout.write(formatDefinitionDiff(diff));
  const count = diff.added.length + diff.removed.length + diff.changed.length;
  process.stderr.write(`arbiter mcp import: ${count} tool(s) of "${options.server}" differ from ${where}\n`);
  return 1;
}

interface ImportOptions {
  url: URL;
  server: string;
  out: string | undefined;
  diff: string | undefined;
  headers: Record<string, string>;
  timeoutMs: number;
}

function parseOptions(argv: string[]): ImportOptions | 'help' {
  const { values, positionals } = parseCommandLine(argv, {
    server: { type: 'string' },
    out: { type: 'string' },
    diff: { type: 'string' },
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
  if (values.diff !== undefined && values.out !== undefined)
    throw new UsageError('--diff and --out exclude each other');
  const headers = headersOf(values.header ?? []);
  return {
    url,
    server: values.server,
    out: values.out,
    diff: values.diff,
    headers,
    timeoutMs: seconds * 1000,
  };
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
