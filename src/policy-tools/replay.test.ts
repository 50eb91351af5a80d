import { afterEach, describe, expect, it } from 'vitest';
import { capability, grant, policy, proposal } from '../engine/test-fixtures.js';
import { ParameterMasker } from '../governance/parameter-masker.js';
import type { DecisionServiceDeps } from '../governance/decision-service.js';
import { serviceOnTempLog, type ServiceOnTempLog } from '../governance/test-decision-service.js';
import { buildIndex, type IndexSnapshot } from '../index/index.js';
import type { PolicyRuleSpec, Proposal } from '../model/index.js';
import { DecisionReplay, maskedPaths } from './replay.js';

const vault = (tokenSchema: Record<string, unknown>, condition?: string) =>
  buildIndex([
    capability('vault.read', {
      parameterSchema: {
        type: 'object',
        properties: { path: { type: 'string' }, token: { ...tokenSchema, 'x-arbiter-sensitive': true } },
      },
    }),
    grant('agent-1', 'agent-1', [{ capability: 'vault.read' }]),
    policy('prod', [
      { capability: 'vault.read', condition: condition ?? "parameters.path == 'prod'", outcome: 'DENY' },
    ]),
  ]);

let context: ServiceOnTempLog | undefined;
afterEach(() => context?.close());

/** The entries of the decisions on these proposals, as an export holds them, and their ids. */
async function recorded(
  snapshot: IndexSnapshot,
  proposals: readonly Proposal[],
  overrides: Partial<DecisionServiceDeps> = {},
) {
  context = await serviceOnTempLog(
    () => snapshot,
    () => new Date('2026-11-24T12:00:00Z'),
    overrides,
  );
  const ids: string[] = [];
  for (const made of proposals) ids.push((await context.service.propose(made, 'key')).decision_id);
  return { entries: (await context.log.query({ order: 'asc', limit: 100 })).entries, ids };
}

/** The entries of decisions made on masked tokens. */
async function recordedDecisions(snapshot: IndexSnapshot) {
  const masker = new ParameterMasker(Buffer.from('a-replay-test-mask-key'), { current: () => snapshot });
  const proposals = ['prod', 'dev'].map((path) => proposal('vault.read', { path, token: 'secret-1' }));
  return (await recorded(snapshot, proposals, { masker })).entries;
}

describe('replaying decisions with masked parameters', () => {
  it('finds the masked values', () => {
    expect(
      maskedPaths({ a: { masked: 'hmac-sha256:1' }, b: [{ c: { masked: 'x' } }], d: { masked: 1 } }),
    ).toEqual(['a', 'b[0].c']);
  });

  it('counts apart what a condition reading a masked field, or a schema refusing it, would decide', async () => {
    const entries = await recordedDecisions(vault({ type: 'string' }));
    const reads = new DecisionReplay(vault({}, "parameters.token == 'x'"), 'ALLOW');
    const refuses = new DecisionReplay(vault({ type: 'string' }), 'ALLOW');
    const neither = new DecisionReplay(vault({}), 'ALLOW');
    for (const entry of entries) for (const replay of [reads, refuses, neither]) replay.add(entry);
    expect(reads.report()).toMatchObject({ replayed: 0, apart: { masked: 2 } });
    expect(refuses.report()).toMatchObject({ replayed: 0, apart: { masked: 2 } });
    // Nothing depends on the token's value: replayed, and the same outcomes.
    expect(neither.report()).toMatchObject({ replayed: 2, unchanged: 2, apart: { masked: 0 } });
  });
});

/** payments.transfer granted to agent-1, under these rules. */
const transfers = (...rules: Array<Omit<PolicyRuleSpec, 'capability'>>) =>
  buildIndex([
    capability('payments.transfer', {
      parameterSchema: { type: 'object', properties: { amount: { type: 'number' } } },
    }),
    grant('agent-1', 'agent-1', [{ capability: 'payments.transfer' }]),
    policy('limits', [...rules.map((rule) => ({ capability: 'payments.transfer', ...rule }))]),
  ]);

describe('the outcome changes a replay reports', () => {
  it('counts the decisions of one change, orders the changes by count, and lists five ids each', async () => {
    const amounts = [200, 45, 300, 1, 400, 500, 600, 2, 55, 700, 5000, 30];
    const made = await recorded(
      transfers({ condition: 'parameters.amount > 100', outcome: 'DENY' }),
      amounts.map((amount) => proposal('payments.transfer', { amount })),
    );
    const idsOf = (...some: number[]) => some.map((amount) => made.ids[amounts.indexOf(amount)]);
    const replay = new DecisionReplay(
      transfers(
        { condition: 'parameters.amount > 1000', outcome: 'DENY' },
        { condition: 'parameters.amount < 10', outcome: 'DENY' },
        { condition: 'parameters.amount > 40 && parameters.amount < 60', outcome: 'ESCALATE' },
      ),
      'ALLOW',
    );
    for (const entry of made.entries) replay.add(entry);
    // Six DENY -> ALLOW first; then two changes of two decisions each, by name (not as first seen).
    expect(replay.report()).toEqual({
      replayed: 12,
      unchanged: 2,
      transitions: [
        {
          from: 'DENY',
          to: 'ALLOW',
          count: 6,
          decisionIds: idsOf(200, 300, 400, 500, 600),
          loosens: true,
        },
        { from: 'ALLOW', to: 'DENY', count: 2, decisionIds: idsOf(1, 2), loosens: false },
        { from: 'ALLOW', to: 'ESCALATE', count: 2, decisionIds: idsOf(45, 55), loosens: false },
      ],
      apart: { rateLimited: 0, reviewed: 0, masked: 0 },
    });
  });
});

describe('replaying tool-proxy decisions of a pinned tool', () => {
  const pinned = `sha256:${'a'.repeat(64)}`;
  const snapshot = buildIndex([
    capability('mcp.notes.add_note', {
      mcp: { server: 'notes', tool: 'add_note', definitionDigest: pinned },
    }),
    grant('agent-1', 'agent-1', [{ capability: 'mcp.notes.add_note' }]),
  ]);
  /** A decision entry as the tool proxy records it, with the definition digest it observed. */
  const entry = (outcome: 'ALLOW' | 'DENY', digest: string | null) =>
    ({
      id: `e-${outcome}`,
      event_type: 'governance.decision',
      timestamp: '2026-11-24T12:00:00Z',
      outcome,
      decision_id: `d-${outcome}`,
      data: {
        request: proposal('mcp.notes.add_note'),
        evaluation: { risk_threshold: 0.7, authority_check: outcome === 'ALLOW' ? 'pass' : 'skipped' },
        decision: { timestamp: '2026-11-24T12:00:00Z' },
        mcp: {
          server: 'notes',
          tool: 'add_note',
          session_id: 's',
          fingerprint: 'f',
          definition_digest: digest,
        },
      },
    }) as unknown as Parameters<DecisionReplay['add']>[0];

  it('decides on the definition observed then: a changed one is denied again', () => {
    const replay = new DecisionReplay(snapshot, 'ALLOW');
    replay.add(entry('DENY', `sha256:${'b'.repeat(64)}`));
    replay.add(entry('ALLOW', pinned));
    expect(replay.report()).toMatchObject({ replayed: 2, unchanged: 2, transitions: [] });
  });
});

describe('replaying decisions of namespaced actors', () => {
  it("names the tier of the new outcome where the actor's namespace has rules", async () => {
    const before = buildIndex([
      capability('files.read'),
      grant('bot', 'team-a/bot', [{ capability: 'files.read' }]),
      grant('other', 'agent-1', [{ capability: 'files.read' }]),
    ]);
    const { entries } = await recorded(before, [
      proposal('files.read', {}, { id: 'team-a/bot' }),
      proposal('files.read', {}, { id: 'agent-1' }),
    ]);
    const after = buildIndex([
      ...before.objects(),
      policy('cluster-deny', [{ capability: 'files.read', outcome: 'ESCALATE' }]),
      {
        apiVersion: 'governance.arbiter.dev/v1alpha1',
        kind: 'NamespacedPolicy',
        metadata: { name: 'deny', namespace: 'team-a' },
        spec: { rules: [{ capability: 'files.read', outcome: 'DENY' }] },
      },
    ]);
    const replay = new DecisionReplay(after, 'ALLOW');
    for (const entry of entries) replay.add(entry);
    expect(replay.report().transitions.map((t) => [t.from, t.to, t.tier, t.count])).toEqual([
      ['ALLOW', 'DENY', 'namespace', 1],
      ['ALLOW', 'ESCALATE', undefined, 1],
    ]);
  });
});
