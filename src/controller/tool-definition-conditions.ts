import type { Logger } from 'pino';
import type { IndexedCapability } from '../index/index.js';
import { ArbiterError, type McpToolPin } from '../model/index.js';
import type { CustomObjects } from './custom-objects.js';
import { transitionTime, type StatusCondition } from './desired-status.js';
import type { RawObject } from './resources.js';

/** The condition type on a Capability pinned to an MCP tool's definition. */
export const TOOL_DEFINITION_CONDITION = 'ToolDefinitionCurrent';

/** A write this process just made is not made again for this long, while the informer catches up. */
const RECENT_MS = 10_000;
/** Tries of one write that finds the object changed meanwhile. */
const MAX_TRIES = 3;

export interface ToolDefinitionConditionsDeps {
  objects: Pick<CustomObjects, 'get' | 'patchStatus'>;
  /** The Capability object as this replica's informer holds it. */
  cached(name: string): RawObject | undefined;
  clock: () => Date;
  logger: Logger;
}

/**
 * Shows on a pinned Capability whether its tool's definition is the pinned one, as the
 * tool proxy of any replica observes it: ToolDefinitionCurrent False (DefinitionChanged,
 * both digests) or True (DefinitionAsPinned). Writes only what the object does not say
 * already, only if the object did not change meanwhile (resourceVersion), and keeps the
 * controller's Ready condition, as the controller keeps this one.
 */
export class ToolDefinitionConditions {
  private readonly writing = new Set<string>();
  private readonly recent = new Map<string, { message: string; atMs: number }>();

  constructor(private readonly deps: ToolDefinitionConditionsDeps) {}

  show(capability: IndexedCapability, pin: McpToolPin, observed: string | null): void {
    const name = capability.id;
    const raw = this.deps.cached(name);
    const desired = conditionFor(pin, observed);
    if (!raw || this.writing.has(name) || says(raw, desired)) return;
    const nowMs = this.deps.clock().getTime();
    const recent = this.recent.get(name);
    if (recent?.message === desired.message && nowMs - recent.atMs < RECENT_MS) return;
    this.recent.set(name, { message: desired.message, atMs: nowMs });
    this.writing.add(name);
    this.write(name, raw, desired)
      .catch((err: unknown) =>
        this.deps.logger.warn(
          { err, capability: capability.name },
          `could not write ${TOOL_DEFINITION_CONDITION}`,
        ),
      )
      .finally(() => this.writing.delete(name));
  }

  private async write(name: string, cached: RawObject, desired: Omit<StatusCondition, 'lastTransitionTime'>) {
    let object = cached;
    for (let attempt = 1; ; attempt++) {
      if (says(object, desired)) return;
      const conditions = withCondition(object, desired, this.deps.clock());
      try {
        await this.deps.objects.patchStatus(
          'Capability',
          name,
          { conditions },
          object.metadata?.resourceVersion,
        );
        return;
      } catch (err) {
        const conflict = err instanceof ArbiterError && err.code === 'CONFLICT';
        if (!conflict || attempt >= MAX_TRIES) throw err;
        object = await this.deps.objects.get('Capability', name);
      }
    }
  }
}

function conditionFor(pin: McpToolPin, observed: string | null): Omit<StatusCondition, 'lastTransitionTime'> {
  if (observed === pin.definitionDigest) {
    return {
      type: TOOL_DEFINITION_CONDITION,
      status: 'True',
      reason: 'DefinitionAsPinned',
      message: `MCP server ${pin.server} lists tool ${pin.tool} as pinned: ${pin.definitionDigest}`,
    };
  }
  const now = observed ?? 'none (no longer listed)';
  return {
    type: TOOL_DEFINITION_CONDITION,
    status: 'False',
    reason: 'DefinitionChanged',
    message:
      `MCP server ${pin.server} lists tool ${pin.tool} with another definition: pinned ${pin.definitionDigest}, ` +
      `now ${now}; its calls are denied until it is reviewed and pinned again`,
  };
}

function conditionsOf(object: RawObject): StatusCondition[] {
  const conditions = (object.status as { conditions?: unknown } | undefined)?.conditions;
  return Array.isArray(conditions) ? (conditions as StatusCondition[]) : [];
}

function says(object: RawObject, desired: Omit<StatusCondition, 'lastTransitionTime'>): boolean {
  const current = conditionsOf(object).find((c) => c.type === TOOL_DEFINITION_CONDITION);
  return (
    current?.status === desired.status &&
    current.reason === desired.reason &&
    current.message === desired.message &&
    current.observedGeneration === object.metadata?.generation
  );
}

/** The object's conditions with `desired` in place of its current one of that type. */
function withCondition(
  object: RawObject,
  desired: Omit<StatusCondition, 'lastTransitionTime'>,
  now: Date,
): StatusCondition[] {
  const conditions = conditionsOf(object);
  const previous = conditions.find((c) => c.type === desired.type);
  const generation = object.metadata?.generation;
  const condition: StatusCondition = {
    ...desired,
    ...(generation !== undefined ? { observedGeneration: generation } : {}),
    lastTransitionTime: transitionTime(previous, desired.status, now),
  };
  return [...conditions.filter((c) => c.type !== desired.type), condition];
}
