import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { parse } from 'yaml';
import { supportsCelRules, withoutCelRules } from '../../scripts/crd-manifests.js';
import type { ControlPlane } from './kube-apiserver.js';

export const CRDS_DIR = fileURLToPath(new URL('../../crds/', import.meta.url));

interface CrdManifest {
  metadata: { name: string; resourceVersion?: string };
  spec: unknown;
}

interface CrdCondition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}

/** The committed CRDs (crds/*.yaml) as objects. */
export async function readCrdManifests(dir = CRDS_DIR): Promise<CrdManifest[]> {
  const files = (await readdir(dir)).filter((file) => file.endsWith('.yaml')).sort();
  return Promise.all(
    files.map(async (file) => parse(await readFile(join(dir, file), 'utf8')) as CrdManifest),
  );
}

/**
 * The CRD as this server should receive it. Servers before 1.25 do not know
 * `x-kubernetes-validations`: they drop it silently, while kubectl's client-side
 * validation against their OpenAPI refuses it; either way the rules are not enforced
 * there (the controller validates too). We strip it for them so what is stored is
 * what is enforced.
 */
export function crdForServer(crd: CrdManifest, version: ControlPlane['version']): CrdManifest {
  return supportsCelRules(version) ? crd : withoutCelRules(crd);
}

/**
 * Creates or replaces the CRDs with raw requests (the typed client's serializer would
 * drop the `x-kubernetes-*` keys it has no camelCase name for) and waits until each is
 * Established, so custom objects can be created right after.
 */
export async function installCrds(
  controlPlane: ControlPlane,
  { timeoutMs = 30_000, dir = CRDS_DIR }: { timeoutMs?: number; dir?: string } = {},
): Promise<string[]> {
  const crds = (await readCrdManifests(dir)).map((crd) => crdForServer(crd, controlPlane.version));
  const base = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
  for (const crd of crds) {
    const created = await controlPlane.request('POST', base, { body: crd });
    if (created.status === 409) {
      const current = await controlPlane.request<CrdManifest>('GET', `${base}/${crd.metadata.name}`);
      const replaced = await controlPlane.request('PUT', `${base}/${crd.metadata.name}`, {
        body: {
          ...crd,
          metadata: { ...crd.metadata, resourceVersion: current.body.metadata.resourceVersion },
        },
      });
      if (replaced.status !== 200) throw new Error(`replacing CRD ${crd.metadata.name}: ${replaced.text}`);
    } else if (created.status !== 201) {
      throw new Error(`creating CRD ${crd.metadata.name}: HTTP ${created.status} ${created.text}`);
    }
  }
  const names = crds.map((crd) => crd.metadata.name);
  await Promise.all(names.map((name) => waitEstablished(controlPlane, `${base}/${name}`, timeoutMs)));
  return names;
}

async function waitEstablished(controlPlane: ControlPlane, path: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let conditions: CrdCondition[] = [];
  while (Date.now() < deadline) {
    const res = await controlPlane.request<{ status?: { conditions?: CrdCondition[] } }>('GET', path);
    conditions = res.body?.status?.conditions ?? [];
    if (conditions.some((c) => c.type === 'Established' && c.status === 'True')) return;
    await sleep(100);
  }
  throw new Error(`${path} not Established after ${timeoutMs} ms: ${JSON.stringify(conditions)}`);
}
