import type { Tool } from '@modelcontextprotocol/server';
import { toolDefinitionDigest } from './tool-definition-digest.js';
import type { UpstreamSession } from './upstream-session.js';

/** A tool as its upstream listed it last, with its definition digest. */
export interface ListedDefinition {
  tool: Tool;
  digest: string;
}

/** An upstream's tools by name, from one tools/list. */
export type ListedDefinitions = ReadonlyMap<string, ListedDefinition>;

/**
 * How old the definitions a call is checked against may be. A tool the upstream changes
 * after a tools/list is refused at the latest this long after the change (a tools/list of
 * any agent refreshes them at once).
 */
export const DEFINITIONS_MAX_AGE_MS = 5_000;

/**
 * The tool definitions of each upstream from its latest tools/list, shared by all agent
 * sessions of this process: every tools/list an agent makes refreshes them, and a call
 * lists again when they are older than maxAgeMs (one listing at a time per upstream).
 */
export class ToolDefinitions {
  private readonly latest = new Map<string, { definitions: ListedDefinitions; listedAtMs: number }>();
  private readonly listing = new Map<string, Promise<ListedDefinitions>>();

  constructor(
    private readonly clock: () => Date,
    private readonly maxAgeMs = DEFINITIONS_MAX_AGE_MS,
  ) {}

  /** Takes in a tools/list of `server`, made at `listedAtMs`. */
  observe(server: string, tools: readonly Tool[], listedAtMs = this.clock().getTime()): ListedDefinitions {
    const definitions = new Map(
      tools.map((tool) => [tool.name, { tool, digest: toolDefinitionDigest(tool) }]),
    );
    const known = this.latest.get(server);
    // A slower listing that started earlier does not replace a newer one.
    if (!known || known.listedAtMs <= listedAtMs) this.latest.set(server, { definitions, listedAtMs });
    return definitions;
  }

  /** The upstream's definitions, no older than maxAgeMs: listed again through `upstream` if need be. */
  async current(upstream: UpstreamSession): Promise<ListedDefinitions> {
    const server = upstream.upstream.name;
    const known = this.latest.get(server);
    if (known && this.clock().getTime() - known.listedAtMs < this.maxAgeMs) return known.definitions;
    let listing = this.listing.get(server);
    if (!listing) {
      const startedMs = this.clock().getTime();
      listing = upstream
        .listTools()
        .then((tools) => this.observe(server, tools, startedMs))
        .finally(() => this.listing.delete(server));
      this.listing.set(server, listing);
    }
    return listing;
  }
}
