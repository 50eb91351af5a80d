import { describe, expect, it } from 'vitest';
import { conditionBindings } from '../engine/cel-bindings.js';
import type { Proposal } from '../model/index.js';
import { compileCondition } from './compile-condition.js';

const proposal: Proposal = {
  actor: { id: 'agent-7', type: 'ai-agent' },
  action: {
    capability: 'payments.refund',
    parameters: {
      amount: 5000,
      price: 12.5,
      currency: 'EUR',
      items: [1, 2, 3],
      nested: { level: 2 },
      flag: true,
    },
  },
  context: { session_id: 's-1', metadata: { environment: 'production' } },
};
const bindings = conditionBindings(proposal, new Date('2024-06-10T08:30:00Z')); // a Monday

function evaluate(source: string) {
  const compiled = compileCondition(source);
  if (!compiled.ok) throw new Error(compiled.error);
  return compiled.condition.evaluate(bindings);
}

describe('compileCondition', () => {
  it.each([
    ['parameters.amount > 1000', true],
    ['parameters.amount == 5000', true],
    ['parameters.amount == 5000.0', true],
    ['parameters.amount >= 5000 && parameters.amount < 5001', true],
    ['parameters.amount + 1 == 5001', true],
    ['parameters.amount / 3 == 1666', true],
    ['parameters.price > 12', true],
    ['parameters.price == 12.5', true],
    ['parameters.price > 12.6', false],
    ["parameters.currency == 'EUR'", true],
    ['parameters.currency in ["USD", "EUR"]', true],
    ['parameters.items.size() == 3', true],
    ['parameters.items.exists(i, i > 2)', true],
    ['parameters.items.all(i, i > 2)', false],
    ['parameters.nested.level == 2', true],
    ['parameters.flag', true],
    ['has(parameters.reason)', false],
    ["has(parameters.reason) and parameters.reason == 'x'", false],
    ['parameters.amount > 1000 and not (parameters.currency == "USD")', true],
    ['parameters.amount < 10 or actor.type == "ai-agent"', true],
    ['actor.id == "agent-7"', true],
    ["context.session_id == 's-1'", true],
    ["context.metadata.environment == 'production'", true],
    ['time.hour == 8 && time.minute == 30', true],
    ['time.day_of_week == 0', true],
    ['type(parameters.amount) == int', true],
  ])('%s -> %s', (source, expected) => {
    expect(evaluate(source)).toEqual({ ok: true, matched: expected });
  });

  it.each([
    ['parameters.missing == 1', /missing/],
    ['parameters.price + 1 == 13.5', /overload/],
    ['parameters.amount', /not to a boolean/],
  ])('reports an evaluation error for %s', (source, message) => {
    const result = evaluate(source);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error).toMatch(message);
  });

  it.each([
    ['parameters.amount >', /expecting|found/],
    ['paramters.amount > 1', /unknown variable 'paramters'/],
    ['x.exists(y, y > 1)', /unknown variable 'x'/],
  ])('rejects %s at compile time', (source, message) => {
    const compiled = compileCondition(source);
    expect(compiled.ok).toBe(false);
    if (!compiled.ok) expect(compiled.error).toMatch(message);
  });

  it('accepts macro variables inside their macro only', () => {
    expect(compileCondition('parameters.items.all(i, i > 0)').ok).toBe(true);
    expect(compileCondition('parameters.items.all(i, i > 0) && i > 0').ok).toBe(false);
  });

  it('evaluates one compiled condition many times with different bindings', () => {
    const compiled = compileCondition('parameters.amount > 1000');
    if (!compiled.ok) throw new Error(compiled.error);
    const at = (amount: number) =>
      compiled.condition.evaluate(
        conditionBindings(
          { ...proposal, action: { ...proposal.action, parameters: { amount } } },
          new Date(0),
        ),
      );
    expect([at(5000), at(10), at(1000), at(1000.5)]).toEqual([
      { ok: true, matched: true },
      { ok: true, matched: false },
      { ok: true, matched: false },
      { ok: true, matched: true },
    ]);
  });

  it('cannot reach prototypes through parameter keys', () => {
    const hostile = JSON.parse('{"__proto__": {"polluted": 1}, "constructor": 2}') as Record<string, unknown>;
    const b = conditionBindings(
      { ...proposal, action: { ...proposal.action, parameters: hostile } },
      new Date(0),
    );
    const compiled = compileCondition('parameters.constructor == 2 && has(parameters.__proto__)');
    if (!compiled.ok) throw new Error(compiled.error);
    expect(compiled.condition.evaluate(b)).toEqual({ ok: true, matched: true });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it.each([
    ['parameters.currency', 'the string "EUR"'],
    ['parameters.amount', 'the number 5000'],
    ['parameters.price', 'the number 12.5'],
    ['null', 'null'],
    ['parameters.items', 'a value of type list, map or message'],
    ['parameters.nested', 'a value of type list, map or message'],
  ])('says what %s evaluated to when it is not a boolean', (source, what) => {
    expect(evaluate(source)).toEqual({
      ok: false,
      error: `the condition evaluated to ${what}, not to a boolean`,
    });
  });

  it('names the variables a condition may use', () => {
    expect(compileCondition('paramters.amount > 1')).toEqual({
      ok: false,
      error: "unknown variable 'paramters' (conditions may use parameters, actor, context, time)",
    });
  });

  it.each(['int', 'uint', 'double', 'bool', 'string', 'bytes', 'list', 'map', 'null_type', 'type', 'dyn'])(
    'knows the type name %s',
    (name) => {
      expect(compileCondition(`type(parameters.amount) == ${name}`).ok).toBe(true);
    },
  );

  it.each([
    ["{'k': paramters.x}['k'] == 1", 'paramters'],
    ['{paramter: 1}.size() == 1', 'paramter'],
    ['parameters.items.all(i, i > limit)', 'limit'],
    [
      'parameters.items.exists_one(i, i == parameters.amount) || parameters.items.map(i, i * k).size() > 0',
      'k',
    ],
  ])('finds the unknown variable in %s', (source, name) => {
    expect(compileCondition(source)).toMatchObject({
      ok: false,
      error: expect.stringContaining(`'${name}'`),
    });
  });
});
