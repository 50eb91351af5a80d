import { describe, expect, it } from 'vitest';
import { capabilitySpecSchema } from '../model/index.js';
import { fromWire, toWire, wireSchema } from './wire-format.js';

describe('wire format', () => {
  it('maps snake_case to camelCase and back, leaving parameter schemas untouched', () => {
    const wire = {
      risk_level: 'low',
      parameter_schema: { properties: { max_rows: { type: 'integer' } } },
      constraints: { rate_limit: { max_requests: 1 } },
    };
    const objects = fromWire<Record<string, unknown>>(wire);
    expect(objects).toEqual({
      riskLevel: 'low',
      parameterSchema: { properties: { max_rows: { type: 'integer' } } },
      constraints: { rateLimit: { maxRequests: 1 } },
    });
    expect(toWire(objects)).toEqual(wire);
  });

  it('derives the snake_case request schema from the spec schema', () => {
    const schema = wireSchema(capabilitySpecSchema) as {
      required: string[];
      properties: Record<string, unknown>;
    };
    expect(schema.required).toEqual(['name', 'risk_level']);
    expect(Object.keys(schema.properties)).toEqual([
      'name',
      'description',
      'risk_level',
      'parameter_schema',
      'mcp',
    ]);
    expect(JSON.stringify(schema)).not.toContain('x-kubernetes');
  });
});
