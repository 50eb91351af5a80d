import { describe, expect, it } from 'vitest';
import { conditionBindings } from './cel-bindings.js';
import { proposal } from './test-fixtures.js';

const NOW = new Date('2024-06-12T12:00:00Z');

function nested(depth: number): Record<string, unknown> {
  let value: Record<string, unknown> = { n: 1 };
  for (let i = 0; i < depth; i++) value = { a: value };
  return value;
}

describe('conditionBindings', () => {
  it('turns safe integers into CEL ints and objects into maps, leaving out undefined members', () => {
    const bound = conditionBindings(
      proposal('x', { count: 5, ratio: 0.5, skip: undefined, list: [1, { b: 2 }] }),
      NOW,
    );
    const parameters = bound.parameters as Map<string, unknown>;
    expect(parameters.get('count')).toBe(5n);
    expect(parameters.get('ratio')).toBe(0.5);
    expect(parameters.has('skip')).toBe(false);
    expect(parameters.get('list')).toEqual([1n, new Map([['b', 2n]])]);
  });

  it('takes own members only, __proto__ included, in their order', () => {
    const inheriting = Object.assign(Object.create({ inherited: 1 }) as object, { own: 2 });
    const parsed: unknown = JSON.parse('{"b":1,"__proto__":{"x":1},"a":2}');
    const bound = conditionBindings(proposal('x', { inheriting, parsed }), NOW).parameters as Map<
      string,
      Map<string, unknown>
    >;
    expect([...bound.get('inheriting')!.keys()]).toEqual(['own']);
    expect([...bound.get('parsed')!.keys()]).toEqual(['b', '__proto__', 'a']);
  });

  it('converts each variable once, when a condition first reads it', () => {
    const bound = conditionBindings(
      proposal('x', { n: 1 }, { type: 'ai-agent' }, { session_id: 's-1', metadata: { ticket: 7 } }),
      NOW,
    );
    expect(bound.actor).toEqual(
      new Map([
        ['id', 'agent-1'],
        ['type', 'ai-agent'],
      ]),
    );
    expect(bound.context).toEqual(
      new Map<string, unknown>([
        ['session_id', 's-1'],
        ['metadata', new Map([['ticket', 7n]])],
      ]),
    );
    // 2024-06-12 was a Wednesday: day 2 of a week that starts on Monday.
    expect(bound.time).toEqual(
      new Map([
        ['hour', 12n],
        ['minute', 0n],
        ['day_of_week', 2n],
      ]),
    );
    for (const name of ['parameters', 'actor', 'context', 'time'] as const)
      expect(bound[name]).toBe(bound[name]);
  });

  it('converts 64 levels of objects and passes deeper ones through unconverted', () => {
    let level = conditionBindings(proposal('x', nested(70)), NOW).parameters as unknown;
    for (let depth = 0; depth < 64; depth++) {
      expect(level, `depth ${depth}`).toBeInstanceOf(Map);
      level = (level as Map<string, unknown>).get('a');
    }
    expect(level).not.toBeInstanceOf(Map);
    expect(level).toEqual(nested(6));
  });

  it('does not overflow the stack on hostile nesting', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 200_000; i++) deep = [deep];
    expect(() => conditionBindings(proposal('x', { deep }), NOW)).not.toThrow();
  });
});
