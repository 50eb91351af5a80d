import { describe, expect, it } from 'vitest';
import type { Principal } from '../auth/index.js';
import { capability, grant } from '../engine/test-fixtures.js';
import { buildIndex } from '../index/index.js';
import { agentActor } from './agent-actor.js';

const snapshot = buildIndex([
  capability('mcp.notes.read'),
  grant('bot', 'bot-1', [{ capability: 'mcp.notes.read' }], 'automation'),
  grant('agent', 'agent-1', [{ capability: 'mcp.notes.read' }]),
]);
const principal = (actors?: string[]): Principal => ({
  name: 'key',
  scopes: new Set(['governance:propose']),
  ...(actors ? { actors: new Set(actors) } : {}),
});

describe('the actor of an MCP session', () => {
  it('is the one actor its credential is bound to, typed as its ActorGrant says or ai-agent', () => {
    expect(agentActor(principal(['bot-1']), undefined, snapshot)).toEqual({
      id: 'bot-1',
      type: 'automation',
    });
    expect(agentActor(principal(['agent-1']), undefined, snapshot)).toEqual({
      id: 'agent-1',
      type: 'ai-agent',
    });
    // An actor without grants yet is still an actor: the proxy will deny its calls.
    expect(agentActor(principal(['new-1']), undefined, snapshot)).toEqual({ id: 'new-1', type: 'ai-agent' });
  });

  it('is named by X-Arbiter-Actor when the credential may act for several, or any', () => {
    expect(agentActor(principal(['bot-1', 'agent-1']), 'bot-1', snapshot).id).toBe('bot-1');
    expect(agentActor(principal(), 'agent-1', snapshot).id).toBe('agent-1');
    expect(() => agentActor(principal(['bot-1', 'agent-1']), undefined, snapshot)).toThrow(
      '"key" may act for 2 actors: name one in the X-Arbiter-Actor header',
    );
    expect(() => agentActor(principal(), undefined, snapshot)).toThrow(
      '"key" may act for any actor: name one in the X-Arbiter-Actor header',
    );
  });

  it('refuses an actor the credential may not act for', () => {
    expect(() => agentActor(principal(['bot-1']), 'agent-1', snapshot)).toThrow(
      expect.objectContaining({ code: 'ACTOR_MISMATCH', message: '"key" may not act for actor agent-1' }),
    );
  });
});
