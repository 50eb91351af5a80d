import { describe, expect, it } from 'vitest';
import { ArbiterError } from '../model/index.js';
import type { AuditEntry, AuditQuery } from './audit-log.js';
import { sealEntry } from './chain.js';
import { event } from './file/test-fixtures.js';
import { auditQueryMatcher, timeBoundsOf } from './query-match.js';

const matcher = (filters: Partial<AuditQuery>) => auditQueryMatcher({ order: 'asc', limit: 100, ...filters });
const at = (timestamp: string): AuditEntry => sealEntry({ id: 'aud-1', ...event({ timestamp }) }, null);

describe('timeBoundsOf', () => {
  it('sets only the bounds a query gives, so spreading them over others replaces no other bound', () => {
    const since = '2025-01-01T00:00:00.000Z';
    const until = '2025-01-02T00:00:00+02:00';
    expect(timeBoundsOf({})).toStrictEqual({});
    expect(timeBoundsOf({ since })).toStrictEqual({ sinceMs: Date.parse(since) });
    expect(timeBoundsOf({ until })).toStrictEqual({ untilMs: Date.parse('2025-01-01T22:00:00.000Z') });
    expect(timeBoundsOf({ since, until })).toStrictEqual({
      sinceMs: Date.parse(since),
      untilMs: Date.parse(until),
    });
  });

  it('refuses a bound that is no timestamp, naming it', () => {
    for (const name of ['since', 'until'] as const) {
      expect(() => timeBoundsOf({ [name]: 'yesterday' })).toThrow(
        new ArbiterError('INVALID_REQUEST', `${name} is not an ISO 8601 timestamp`),
      );
    }
  });
});

describe('auditQueryMatcher', () => {
  it('matches bounds inclusively, as instants whatever their offsets', () => {
    const matches = matcher({ since: '2025-01-01T02:00:00+02:00', until: '2025-01-01T00:00:01Z' });
    expect(matches(at('2025-01-01T00:00:00.000Z'))).toBe(true);
    expect(matches(at('2025-01-01T00:00:01.000Z'))).toBe(true);
    expect(matches(at('2024-12-31T23:59:59.999Z'))).toBe(false);
    expect(matches(at('2025-01-01T00:00:01.001Z'))).toBe(false);
    expect(matcher({ until: '2025-01-01T00:00:00Z' })(at('2025-01-01T00:00:00.001Z'))).toBe(false);
  });

  it('matches an entry whose timestamp does not parse only when no bound is set', () => {
    const entry = at('not a time');
    expect(matcher({})(entry)).toBe(true);
    expect(matcher({ actor_id: 'agent-1' })(entry)).toBe(true);
    expect(matcher({ since: '2000-01-01T00:00:00Z' })(entry)).toBe(false);
    expect(matcher({ until: '2100-01-01T00:00:00Z' })(entry)).toBe(false);
  });
});

describe('the namespace filter', () => {
  const of = (actor_id: string | null) => sealEntry({ id: 'aud-1', ...event({ actor_id }) }, null);

  it("matches the entries of the namespace's actors only, by the actor id", () => {
    const teamA = matcher({ namespace: 'team-a' });
    expect(teamA(of('team-a/bot'))).toBe(true);
    expect(teamA(of('team-b/bot'))).toBe(false);
    expect(teamA(of('team-a'))).toBe(false);
    expect(teamA(of('team-ab/bot'))).toBe(false);
    expect(teamA(of(null))).toBe(false);
    expect(matcher({ namespace: 'team-a', actor_id: 'team-a/bot' })(of('team-a/bot'))).toBe(true);
  });
});
