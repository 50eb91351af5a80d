import { afterEach, describe, expect, it } from 'vitest';
import type { AuditLog } from '../audit/audit-log.js';
import { openLog, tempDir } from '../audit/file/test-fixtures.js';
import { API_VERSION, type ActorGrantObject, type CapabilityObject } from '../model/index.js';
import { ConfigAuditor } from './config-auditor.js';
import { configChanges } from './config-changes.js';

const capability = (i: number): CapabilityObject => ({
  apiVersion: API_VERSION,
  kind: 'Capability',
  metadata: { name: `cap-${i}` },
  spec: { name: `svc${i}.act`, riskLevel: 'low' },
});

const actorGrant = (actor: string, capabilities: number): ActorGrantObject => ({
  apiVersion: API_VERSION,
  kind: 'ActorGrant',
  metadata: { name: actor },
  spec: {
    actor: { id: actor, type: 'ai-agent' },
    grants: Array.from({ length: capabilities }, (_, i) => ({ capability: `svc${i}.act` })),
  },
});

const clock = () => new Date('2026-11-23T12:00:00.000Z');
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

describe('ConfigAuditor', () => {
  it('records a large change set in order, once, and remembers it across a restart', async () => {
    const { dir, cleanup } = await tempDir();
    cleanups.push(cleanup);
    const objects = Array.from({ length: 1_234 }, (_, i) => capability(i));
    const log = await openLog(dir);
    expect(await new ConfigAuditor(log, clock).record(objects, 'manifests')).toBe(1_234);
    const page = await log.query({ event_type: 'capability.registered', order: 'asc', limit: 2_000 });
    const planned = configChanges([], objects, 'manifests').map((c) => c.capability);
    expect(page.entries.map((e) => e.capability)).toEqual(planned);
    // A configuration event has no decision: its decision fields are empty, not made up.
    expect(page.entries[0]).toMatchObject({
      timestamp: '2026-11-23T12:00:00.000Z',
      actor_id: 'manifests',
      outcome: null,
      risk_score: null,
      decision_id: null,
      policies_evaluated: [],
      policy_matched: null,
    });
    expect(new Set(planned).size).toBe(1_234);
    await log.close();

    const reopened = await openLog(dir);
    const auditor = new ConfigAuditor(reopened, clock);
    await auditor.restore();
    expect(await auditor.record(objects, 'manifests')).toBe(0);
    await reopened.close();
  });

  it('does not move its state when the log refuses an event, so the change is recorded again', async () => {
    const { dir, cleanup } = await tempDir();
    cleanups.push(cleanup);
    const log = await openLog(dir);
    let refuseAfter = 700;
    const flaky: AuditLog = Object.create(log) as AuditLog;
    flaky.append = (event) =>
      refuseAfter-- > 0 ? log.append(event) : Promise.reject(new Error('audit log unavailable'));
    const auditor = new ConfigAuditor(flaky, clock);
    const objects = Array.from({ length: 1_000 }, (_, i) => capability(i));
    await expect(auditor.record(objects, 'manifests')).rejects.toThrow('audit log unavailable');
    refuseAfter = Number.POSITIVE_INFINITY;
    expect(await auditor.record(objects, 'manifests')).toBe(1_000);
    await log.close();
  });

  it('stores an ActorGrant once per change, not once per grant, and still restores it', async () => {
    const { dir, cleanup } = await tempDir();
    cleanups.push(cleanup);
    const log = await openLog(dir);
    const before = [actorGrant('agent-1', 50)];
    expect(await new ConfigAuditor(log, clock).record(before, 'manifests')).toBe(50);
    const page = await log.query({ event_type: 'actor.grant.created', order: 'asc', limit: 100 });
    const carrying = page.entries.filter((e) => (e.data as { object?: unknown }).object !== undefined);
    expect(carrying.map((e) => e.seq)).toEqual([50]);
    await log.close();

    const reopened = await openLog(dir);
    const auditor = new ConfigAuditor(reopened, clock);
    await auditor.restore();
    expect(await auditor.record(before, 'manifests')).toBe(0);
    // A later change is a diff against the restored object: one revocation, no re-grants.
    expect(await auditor.record([actorGrant('agent-1', 49)], 'manifests')).toBe(1);
    await reopened.close();
  });

  it('restores the last recorded state: a deleted object is gone, a re-created one is back', async () => {
    const { dir, cleanup } = await tempDir();
    cleanups.push(cleanup);
    const log = await openLog(dir);
    const auditor = new ConfigAuditor(log, clock);
    await auditor.record([capability(0), capability(1)], 'manifests');
    await auditor.record([capability(1)], 'manifests');
    await auditor.record([], 'manifests');
    await auditor.record([capability(1)], 'manifests');
    await log.close();

    const reopened = await openLog(dir);
    const restored = new ConfigAuditor(reopened, clock);
    await restored.restore();
    expect(await restored.record([capability(1)], 'manifests')).toBe(0);
    await reopened.close();
  });

  it('after a change only partly stored, a restart records it again against the last complete state', async () => {
    const { dir, cleanup } = await tempDir();
    cleanups.push(cleanup);
    const log = await openLog(dir);
    await new ConfigAuditor(log, clock).record([actorGrant('agent-1', 1)], 'manifests');
    // Two new grants: the first event is stored, the last (carrying the object) is refused.
    const flaky: AuditLog = Object.create(log) as AuditLog;
    flaky.append = (event) =>
      'object' in event.data ? Promise.reject(new Error('audit log unavailable')) : log.append(event);
    await expect(
      new ConfigAuditor(flaky, clock).record([actorGrant('agent-1', 3)], 'manifests'),
    ).rejects.toThrow('audit log unavailable');
    await log.close();

    const reopened = await openLog(dir);
    const auditor = new ConfigAuditor(reopened, clock);
    await auditor.restore();
    expect(await auditor.record([actorGrant('agent-1', 3)], 'manifests')).toBe(2);
    await reopened.close();
  });
});
