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
      empty: null,
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
    ['parameters.empty', 'null'],
    ['parameters.price', 'the number 12.5'],
    ['parameters.items', 'a value of type list, map or message'],
    ['parameters.nested', 'a value of type list, map or message'],
    ['parameters.flag ? parameters.currency : true', 'the string "EUR"'],
  ])('says what %s evaluated to when it is not a boolean', (source, what) => {
    expect(evaluate(source)).toEqual({
      ok: false,
      error: `the condition evaluated to ${what}, not to a boolean`,
    });
  });

  it('names the variables a condition may use', () => {
    expect(compileCondition('paramters.amount > 1')).toEqual({
      ok: false,
      error:
        "<input>:1:1: unknown variable 'paramters' (conditions may use parameters, actor, context, time)",
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

/** A capability's parameter schema, as an author writes one. */
const schema = {
  type: 'object',
  required: ['query', 'amount'],
  properties: {
    query: { type: 'string' },
    amount: { type: 'number' },
    count: { type: 'integer' },
    approved: { type: 'boolean' },
    tags: { type: 'array', items: { type: 'string' } },
    target: {
      type: 'object',
      properties: { cluster: { type: 'string' }, replicas: { type: 'integer' } },
      additionalProperties: false,
    },
    labels: { type: 'object', additionalProperties: { type: 'string' } },
    extra: {},
  },
};

function compileError(source: string, parameterSchema?: Record<string, unknown>): string {
  const compiled = compileCondition(source, parameterSchema);
  return compiled.ok ? 'compiled' : compiled.error;
}

describe('compileCondition type-checks', () => {
  it.each([
    ['1 + "a" == 2', "<input>:1:2: found no matching overload for '+' applied to (int, string)"],
    ['"a" == 1', "<input>:1:4: found no matching overload for '==' applied to (string, int)"],
    ["parameters.amount > 1 && 'yes'", "<input>:1:26: '&&' needs a bool, but this is a value of type string"],
    ['size(1) > 0', "<input>:1:1: found no matching overload for 'size' applied to (int)"],
    [
      "'abc'.startsWith(1)",
      "<input>:1:6: found no matching overload for 'startsWith' applied to string.(int)",
    ],
    ["matches('abc', 'a')", "<input>:1:1: unknown function 'matches' with 2 argument(s)"],
    ['[1, 2].all(x, x)', "<input>:1:15: '&&' needs a bool, but this is a value of type int"],
    [
      '(1).exists(x, true)',
      '<input>:1:4: a macro can iterate over a list or a map, not over a value of type int',
    ],
    ['actor.name == "x"', "<input>:1:6: undefined field 'name' (the object has id, type and no others)"],
    ['time.hour == "9"', "<input>:1:11: found no matching overload for '==' applied to (int, string)"],
    ["'a' in 'abc'", "<input>:1:4: found no matching overload for 'in' applied to (string, string)"],
    ['"abc"[0] == "a"', "<input>:1:6: found no matching overload for '[]' applied to (string, int)"],
    ['{[1]: 2}.size() == 1', '<input>:1:1: a map key must be an int, uint, bool or string, not list(int)'],
  ])('refuses %s whatever the schema', (source, error) => {
    expect(compileError(source)).toBe(error);
    expect(compileError(source, schema)).toBe(error);
  });

  it.each([
    ['true', 'compiled'],
    ['1', 'a condition must be a bool, but this one is a value of type int'],
    ['"yes"', 'a condition must be a bool, but this one is a value of type string'],
    ['null', 'a condition must be a bool, but this one is a value of type null_type'],
    ['[true]', 'a condition must be a bool, but this one is a value of type list(bool)'],
    ['parameters', 'a condition must be a bool, but this one is a value of type map(string, dyn)'],
    ['time.hour', 'a condition must be a bool, but this one is a value of type int'],
    ['type(parameters.x)', 'a condition must be a bool, but this one is a value of type type'],
    ["time.hour > 8 ? true : 'no'", 'a condition must be a bool, but this one is one of bool or string'],
  ])('needs a bool result: %s', (source, error) => {
    expect(compileError(source)).toBe(error);
  });

  it.each([
    ['parameters.query', 'a condition must be a bool, but this one is a value of type string'],
    ['!parameters.query', "<input>:1:1: found no matching overload for '!' applied to (string)"],
    ['parameters.query || true', "<input>:1:11: '||' needs a bool, but this is a value of type string"],
    ['parameters.query > 5', "<input>:1:18: found no matching overload for '>' applied to (string, int)"],
    ['parameters.query == 5', "<input>:1:18: found no matching overload for '==' applied to (string, int)"],
    [
      'parameters.count.startsWith("1")',
      "<input>:1:17: found no matching overload for 'startsWith' applied to int.(string)",
    ],
    [
      'parameters.approved == "true"',
      "<input>:1:21: found no matching overload for '==' applied to (bool, string)",
    ],
    [
      'parameters.tags.exists(t, t > 1)',
      "<input>:1:28: found no matching overload for '>' applied to (string, int)",
    ],
    [
      "parameters.tags['a'] == 'b'",
      "<input>:1:16: found no matching overload for '[]' applied to (list(string), string)",
    ],
    [
      'parameters.target.zone == "eu"',
      "<input>:1:18: undefined field 'zone' (the object has cluster, replicas and no others)",
    ],
    [
      'has(parameters.target.zone)',
      "<input>:1:1: undefined field 'zone' (the object has cluster, replicas and no others)",
    ],
    [
      "parameters.target['zone'] == 'eu'",
      "<input>:1:18: undefined field 'zone' (the object has cluster, replicas and no others)",
    ],
    [
      'parameters.target.replicas > "3"',
      "<input>:1:28: found no matching overload for '>' applied to (int, string)",
    ],
    [
      'parameters.labels.team > 1',
      "<input>:1:24: found no matching overload for '>' applied to (string, int)",
    ],
    // A JSON number is an int when whole and a double otherwise: `+ 1` fails for 12.5.
    [
      'parameters.amount + 1 > 10',
      "<input>:1:19: found no matching overload for '+' applied to (double, int) " +
        '(one case of (int or double, int): each may be any of its types at run time)',
    ],
  ])('refuses %s against the schema, accepts it without one', (source, error) => {
    expect(compileError(source, schema)).toBe(error);
    expect(compileError(source)).toBe('compiled');
  });

  // The types the checker declares must be the types cel-bindings binds: each of these
  // compiles against the schema and evaluates without an error for every value it allows.
  const values = [
    { query: 'SELECT 1', amount: 20000, count: 3, approved: true },
    { query: 'drop table', amount: 20000.5, count: -1, approved: false },
    { query: '', amount: 0, count: 0, tags: ['a', 'b'], target: { cluster: 'eu-1', replicas: 2 } },
    { query: 'x', amount: 0.1, labels: { team: 'db' }, extra: [1, 'a'] },
  ];
  it.each([
    'parameters.amount > 10000',
    'parameters.amount >= 10000.0',
    'parameters.amount == 20000',
    'parameters.amount != 0.5',
    '-parameters.amount < 0',
    'double(parameters.amount) * 2.0 > 1.0',
    'int(parameters.amount) % 2 == 0',
    'parameters.amount in [0, 20000]',
    "parameters.query.startsWith('drop')",
    "parameters.query == 'x' || parameters.query.size() > 3",
    "parameters.query.matches('^SELECT')",
    'has(parameters.count) && parameters.count + 1 > 2',
    'has(parameters.count) && parameters.count > 1.5',
    'has(parameters.approved) && parameters.approved',
    'has(parameters.approved) && !parameters.approved',
    "has(parameters.tags) && parameters.tags.exists(t, t == 'a')",
    "has(parameters.tags) && 'b' in parameters.tags && parameters.tags[0] == 'a'",
    'has(parameters.tags) && parameters.tags.map(t, t + "!").size() == 2',
    "has(parameters.target) && parameters.target.cluster.startsWith('eu') && parameters.target.replicas < 3",
    "has(parameters.labels) && parameters.labels.team == 'db' && 'team' in parameters.labels",
    'has(parameters.extra) && parameters.extra.size() == 2',
    'parameters.size() >= 2',
    "parameters.exists(k, k == 'query')",
    'type(parameters.amount) == int || type(parameters.amount) == double',
    "parameters.query == null || actor.type == 'ai-agent'",
    "context.session_id == null || context.metadata.environment == 'prod'",
    'time.hour >= 9 && time.hour < 17 && time.day_of_week < 5 && time.minute >= 0',
  ])('accepts %s and evaluates it for every value the schema allows', (source) => {
    const compiled = compileCondition(source, schema);
    if (!compiled.ok) throw new Error(compiled.error);
    for (const parameters of values) {
      const b = conditionBindings({ ...proposal, action: { ...proposal.action, parameters } }, new Date(0));
      expect(compiled.condition.evaluate(b)).toMatchObject({ ok: true });
    }
  });

  it('types parameters as a map of dyn for a capability with no schema (or none registered yet)', () => {
    expect(compileError('parameters.query && parameters.anything.deep > 1')).toBe('compiled');
    expect(compileError('parameters.query && parameters.anything.deep > 1', { type: 'object' })).toBe(
      'compiled',
    );
  });
});
