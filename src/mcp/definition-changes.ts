import type { Logger } from 'pino';
import type { AuditLog } from '../audit/audit-log.js';
import { systemEvent } from '../audit/system-event.js';
import { definitionChanged } from '../engine/index.js';
import type { IndexedCapability } from '../index/index.js';
import type { Metrics } from '../metrics/index.js';
import type { McpToolPin } from '../model/index.js';
import type { OneTimeUses } from '../one-time-uses/index.js';
import { toolDefinition } from './tool-definition-digest.js';
import type { ListedDefinition } from './tool-definitions.js';

/**
 * Where a Capability shows whether its tool's definition is the pinned one (in cluster mode
 * the ToolDefinitionCurrent condition). Told of every observation: it writes only what
 * differs from what the Capability shows already.
 */
export interface ToolDefinitionStatus {
  /** `observed`: the digest the upstream lists now, null when it no longer lists the tool. */
  show(capability: IndexedCapability, pin: McpToolPin, observed: string | null): void;
}

export interface DefinitionChangesDeps {
  audit: Pick<AuditLog, 'append'>;
  /** Where the one record of each change is claimed, shared by the replicas. */
  uses: OneTimeUses;
  metrics: Metrics;
  clock: () => Date;
  logger: Logger;
  status?: ToolDefinitionStatus | undefined;
}

/**
 * How long the record of a change stays claimed: a replica that has not seen the change
 * before (a restart) records it again only after this, if the tool is still not re-pinned.
 */
const CLAIM_DAYS = 90;

/**
 * Records each change of a pinned tool's definition once, however many calls, lists and
 * replicas see it: an mcp.tool.changed audit entry (server, tool, capability, old and new
 * digest, the new definition), counted in arbiter_mcp_tool_definition_changes_total. The
 * record never decides anything: the engine denies the calls (definition_changed).
 */
export class DefinitionChanges {
  /** Changes this process recorded, or saw claimed by another: no claim per call. */
  private readonly known = new Set<string>();

  constructor(private readonly deps: DefinitionChangesDeps) {}

  /** What the upstream lists now for a capability's tool (undefined: not listed). */
  async observe(capability: IndexedCapability, listed: ListedDefinition | undefined): Promise<void> {
    const pin = capability.spec.mcp;
    if (!pin) return;
    const observed = listed?.digest ?? null;
    this.deps.status?.show(capability, pin, observed);
    if (!definitionChanged(pin, observed)) return;
    const key = `mcp-tool-changed:${pin.server}:${pin.tool}:${observed ?? 'unlisted'}`;
    if (this.known.has(key)) return;
    try {
      await this.recordOnce(key, capability.name, pin, listed);
      this.known.add(key);
    } catch (err) {
      // The calls are denied all the same; a later observation tries to record it again.
      this.deps.logger.error(
        { err, server: pin.server, tool: pin.tool },
        'the change of a pinned MCP tool definition could not be recorded',
      );
    }
  }

  private async recordOnce(
    key: string,
    capability: string,
    pin: McpToolPin,
    listed: ListedDefinition | undefined,
  ): Promise<void> {
    const now = this.deps.clock();
    const until = new Date(now.getTime() + CLAIM_DAYS * 86_400_000);
    if (!(await this.deps.uses.claim(key, until))) return;
    try {
      await this.deps.audit.append({
        ...systemEvent('mcp.tool.changed', now.toISOString(), null, {
          server: pin.server,
          tool: pin.tool,
          capability,
          old_digest: pin.definitionDigest,
          new_digest: listed?.digest ?? null,
          definition: listed ? toolDefinition(listed.tool) : null,
        }),
        capability,
      });
    } catch (err) {
      await this.deps.uses.release(key).catch(() => undefined);
      throw err;
    }
    this.deps.metrics.mcpToolDefinitionChanges.inc({ server: pin.server, tool: pin.tool });
    this.deps.logger.warn(
      {
        server: pin.server,
        tool: pin.tool,
        old_digest: pin.definitionDigest,
        new_digest: listed?.digest ?? null,
      },
      'a pinned MCP tool definition changed: its calls are denied until it is re-pinned',
    );
  }
}
