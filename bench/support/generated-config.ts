import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'yaml';

export interface ConfigSize {
  capabilities: number;
  policies: number;
  grants: number;
  grantsPerActor: number;
}

const API_VERSION = 'governance.arbiter.dev/v1alpha1';
const RISK = ['low', 'medium', 'high'] as const;

/** The objects of a generated configuration: distinct schemas, one rule per policy, grants spread over actors. */
export function generatedObjects(size: ConfigSize): Array<Record<string, unknown>> {
  const objects: Array<Record<string, unknown>> = [];
  for (let i = 0; i < size.capabilities; i++) {
    objects.push({
      apiVersion: API_VERSION,
      kind: 'Capability',
      metadata: { name: `cap-${i}` },
      spec: {
        name: `svc${i}.act`,
        description: `Generated capability ${i}`,
        riskLevel: RISK[i % 3],
        parameterSchema: {
          type: 'object',
          required: ['amount'],
          properties: {
            amount: { type: 'integer', minimum: 0 },
            [`field${i}`]: { type: 'string', maxLength: 100 },
          },
        },
      },
    });
  }
  for (let i = 0; i < size.policies; i++) {
    objects.push({
      apiVersion: API_VERSION,
      kind: 'Policy',
      metadata: { name: `policy-${i}` },
      spec: {
        description: `Generated policy ${i}`,
        enabled: true,
        rules: [
          {
            capability: `svc${i % size.capabilities}.act`,
            condition: `parameters.amount > ${1000 + i}`,
            outcome: i % 2 ? 'DENY' : 'ESCALATE',
            priority: 100,
          },
        ],
      },
    });
  }
  const actors = Math.ceil(size.grants / size.grantsPerActor);
  for (let a = 0; a < actors; a++) {
    const count = Math.min(size.grantsPerActor, size.grants - a * size.grantsPerActor);
    objects.push({
      apiVersion: API_VERSION,
      kind: 'ActorGrant',
      metadata: { name: `actor-${a}` },
      spec: {
        actor: { id: `actor-${a}`, type: 'ai-agent' },
        grants: Array.from({ length: count }, (_, j) => ({
          capability: `svc${(a * 7 + j) % size.capabilities}.act`,
        })),
      },
    });
  }
  return objects;
}

/** Proposals that land on granted capabilities of actors spread over the whole set. */
export function generatedProposals(size: ConfigSize, count: number): string[] {
  const actors = Math.ceil(size.grants / size.grantsPerActor);
  return Array.from({ length: count }, (_, k) => {
    const a = Math.floor((k * 7919) % actors);
    const j = k % Math.min(size.grantsPerActor, size.grants);
    return JSON.stringify({
      actor: { id: `actor-${a}`, type: 'ai-agent' },
      action: { capability: `svc${(a * 7 + j) % size.capabilities}.act`, parameters: { amount: 10 * k } },
    });
  });
}

/** Writes the objects as one multi-document YAML file per kind (the manifests folder). */
export async function writeManifests(dir: string, objects: Array<Record<string, unknown>>): Promise<void> {
  await mkdir(dir, { recursive: true });
  for (const kind of new Set(objects.map((o) => String(o.kind)))) {
    const docs = objects.filter((o) => o.kind === kind).map((o) => stringify(o));
    await writeFile(join(dir, `${kind.toLowerCase()}.yaml`), docs.join('---\n'));
  }
}
