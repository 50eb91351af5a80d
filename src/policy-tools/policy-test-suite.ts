import { Ajv } from 'ajv';
import { proposalSchema } from '../api/request-schemas.js';
import { ajvErrorText } from '../index/ajv-error-text.js';
import {
  AUTHORITY_CHECKS,
  OUTCOMES,
  type AuthorityCheck,
  type Outcome,
  type Proposal,
  type Tier,
} from '../model/index.js';

export const TEST_API_VERSION = 'test.arbiter.dev/v1alpha1';

export type RiskExpectation = number | { min?: number; max?: number };

export interface CaseExpectation {
  outcome?: Outcome;
  /** The policy that decided; null asserts that none did. */
  policy?: string | null;
  capabilityCheck?: string;
  authorityCheck?: AuthorityCheck;
  riskScore?: RiskExpectation;
  /** A substring of the reason. */
  reason?: string;
  /** Which tier decided (evaluation.tier); present only where the actor's namespace has rules. */
  tier?: Tier;
}

export interface PolicyTestCase {
  name: string;
  now?: string;
  /** Requests of this actor and capability already admitted within the grant's window. */
  priorRequests?: number;
  proposal: Proposal;
  expect: CaseExpectation;
}

export interface PolicyTestSuite {
  apiVersion: typeof TEST_API_VERSION;
  kind: 'PolicyTest';
  metadata: { name: string };
  spec: {
    manifests: string[];
    now?: string;
    settings?: { riskThreshold?: number; defaultOutcome?: 'ALLOW' | 'DENY' };
    cases: PolicyTestCase[];
  };
}

const isoTime = { type: 'string', format: 'date-time' } as const;

const suiteSchema = {
  type: 'object',
  required: ['apiVersion', 'kind', 'metadata', 'spec'],
  properties: {
    apiVersion: { const: TEST_API_VERSION },
    kind: { const: 'PolicyTest' },
    metadata: { type: 'object', required: ['name'], properties: { name: { type: 'string', minLength: 1 } } },
    spec: {
      type: 'object',
      required: ['manifests', 'cases'],
      additionalProperties: false,
      properties: {
        manifests: { type: 'array', minItems: 1, items: { type: 'string', minLength: 1 } },
        now: isoTime,
        settings: {
          type: 'object',
          additionalProperties: false,
          properties: {
            riskThreshold: { type: 'number', minimum: 0, maximum: 1 },
            defaultOutcome: { enum: ['ALLOW', 'DENY'] },
          },
        },
        cases: {
          type: 'array',
          minItems: 1,
          items: {
            type: 'object',
            required: ['name', 'proposal', 'expect'],
            additionalProperties: false,
            properties: {
              name: { type: 'string', minLength: 1 },
              now: isoTime,
              priorRequests: { type: 'integer', minimum: 0 },
              proposal: proposalSchema,
              expect: {
                type: 'object',
                additionalProperties: false,
                properties: {
                  outcome: { enum: [...OUTCOMES] },
                  policy: { type: ['string', 'null'] },
                  capabilityCheck: {
                    enum: ['pass', 'not_registered', 'definition_changed', 'invalid_parameters'],
                  },
                  authorityCheck: {
                    enum: [...AUTHORITY_CHECKS],
                  },
                  tier: { enum: ['cluster', 'namespace'] },
                  riskScore: {
                    oneOf: [
                      { type: 'number' },
                      {
                        type: 'object',
                        additionalProperties: false,
                        minProperties: 1,
                        properties: { min: { type: 'number' }, max: { type: 'number' } },
                      },
                    ],
                  },
                  reason: { type: 'string' },
                },
              },
            },
          },
        },
      },
    },
  },
} as const;

const ajv = new Ajv({ allErrors: true, strict: false });
ajv.addFormat('date-time', (value: string) => !Number.isNaN(Date.parse(value)) && /T/.test(value));
const validateSuite = ajv.compile<PolicyTestSuite>(suiteSchema);

/** The suite, or why it is not one (each problem names its field). */
export function parsePolicyTestSuite(raw: unknown): { suite: PolicyTestSuite } | { errors: string[] } {
  if (validateSuite(raw)) return { suite: raw };
  return { errors: (validateSuite.errors ?? []).map((e) => ajvErrorText(e, 'suite')) };
}

/** Whether a parsed YAML document is meant as a test suite (so other documents may sit beside it). */
export function isPolicyTestDocument(raw: unknown): boolean {
  return (raw as { apiVersion?: unknown } | null)?.apiVersion === TEST_API_VERSION;
}
