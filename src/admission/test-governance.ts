import type { AuditEntry } from '../audit/audit-log.js';
import type { FileAuditLog } from '../audit/file/file-audit-log.js';
import { openLog, tempDir } from '../audit/file/test-fixtures.js';
import { MemoryRateLimiter, resolveEngineSettings } from '../engine/index.js';
import { capability, grant, policy } from '../engine/test-fixtures.js';
import { DecisionService } from '../governance/decision-service.js';
import { InPathDecisions } from '../governance/in-path-decisions.js';
import { buildIndex, type IndexSnapshot } from '../index/index.js';
import { MemoryOneTimeUses } from '../one-time-uses/index.js';
import type { ActorGrantObject, PolicyObject } from '../model/index.js';
import type { GovernanceReviewDeps } from './governance-review.js';

/**
 * The governance webhook's real dependencies for admission tests (not part of the public
 * surface): an index built from manifests, the engine, a file audit log in a temp dir.
 *
 * In the world: the ServiceAccount agents/planner is bound to actor agent-7 (type
 * ai-agent), which may create, update and delete ConfigMaps but not Secrets. Deleting a
 * ConfigMap is escalated; creating one named `needs-ok` needs confirmation, one named
 * `forbidden` is denied; a warn-mode policy would deny updates and deletes.
 */
export interface GovernedWorld {
  deps: GovernanceReviewDeps;
  service: DecisionService;
  log: FileAuditLog;
  /** Every audit entry so far, oldest first. */
  entries(): Promise<AuditEntry[]>;
  setNow(now: Date): void;
  close(): Promise<void>;
}

export const GOVERNED_NOW = new Date('2026-11-23T12:00:00Z');
export const PENDING_TTL_SECONDS = 600;

function boundGrant(): ActorGrantObject {
  const object = grant(
    'agent-7',
    'agent-7',
    [
      { capability: 'k8s.configmaps.create' },
      { capability: 'k8s.configmaps.update' },
      { capability: 'k8s.configmaps.delete' },
    ],
    'ai-agent',
  );
  return {
    ...object,
    spec: {
      ...object.spec,
      actor: {
        ...object.spec.actor,
        subjects: [{ kind: 'ServiceAccount', namespace: 'agents', name: 'planner' }],
      },
    },
  };
}

function warnPolicy(): PolicyObject {
  const object = policy('trial', [
    { capability: 'k8s.configmaps.update', outcome: 'DENY' },
    { capability: 'k8s.configmaps.delete', outcome: 'DENY' },
  ]);
  return { ...object, spec: { ...object.spec, enforcementAction: 'warn' } };
}

export function governedSnapshot(): IndexSnapshot {
  return buildIndex([
    capability('k8s.configmaps.create'),
    capability('k8s.configmaps.update'),
    capability('k8s.configmaps.delete'),
    capability('k8s.secrets.create'),
    boundGrant(),
    policy('careful', [
      { capability: 'k8s.configmaps.delete', outcome: 'ESCALATE' },
      {
        capability: 'k8s.configmaps.create',
        condition: "parameters.name == 'needs-ok'",
        outcome: 'REQUIRE_CONFIRMATION',
      },
      { capability: 'k8s.configmaps.create', condition: "parameters.name == 'forbidden'", outcome: 'DENY' },
    ]),
    warnPolicy(),
  ]);
}

export async function governedWorld(
  exemptNamespaces: ReadonlySet<string> = new Set(['kube-system']),
): Promise<GovernedWorld> {
  const temp = await tempDir();
  const log = await openLog(temp.dir);
  let now = GOVERNED_NOW;
  const snapshot = governedSnapshot();
  const index = { current: () => snapshot };
  const limiter = new MemoryRateLimiter();
  const settings = resolveEngineSettings();
  const clock = () => now;
  const uses = new MemoryOneTimeUses(clock);
  const service = new DecisionService({
    index,
    audit: log,
    limiter,
    settings,
    clock,
    pendingTtlSeconds: PENDING_TTL_SECONDS,
    uses,
  });
  const decisions = new InPathDecisions({
    index,
    audit: log,
    limiter,
    settings,
    clock,
    recorder: service.recorder,
    uses,
  });
  return {
    deps: { index, decisions, exemptNamespaces },
    service,
    log,
    entries: async () => (await log.query({ order: 'asc', limit: 200 })).entries,
    setNow: (next) => void (now = next),
    close: async () => {
      await log.close();
      await temp.cleanup();
    },
  };
}
