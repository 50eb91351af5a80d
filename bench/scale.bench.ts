import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { startControlPlane } from '../test/env/kube-apiserver.js';
import { installCrds } from '../test/env/install-crds.js';
import { startRedisServer } from '../test/env/redis-server.js';
import {
  generatedObjects,
  generatedProposals,
  writeManifests,
  type ConfigSize,
} from './support/generated-config.js';
import { ADMIN_AUTH } from './support/payloads.js';
import { REPO, startArbiter, tempDir } from './support/processes.js';
import type { Report } from './support/report.js';
import type { BenchSettings } from './support/settings.js';
import { runWrk } from './support/wrk.js';

const PLURAL: Record<string, string> = {
  Capability: 'capabilities',
  Policy: 'policies',
  ActorGrant: 'actorgrants',
};
const API_BASE = '/apis/governance.arbiter.dev/v1alpha1';

interface Measured {
  p50: number;
  p99: number;
  rps: number;
  rssMiB: number;
  startSec: number;
}

async function measure(size: ConfigSize, settings: BenchSettings, redisUrl: string): Promise<Measured> {
  const dir = await tempDir('arbiter-bench-manifests-');
  try {
    await writeManifests(dir, generatedObjects(size));
    const t0 = performance.now();
    const arbiter = await startArbiter({ manifests: dir, redisUrl, timeoutMs: 300_000 });
    const startSec = (performance.now() - t0) / 1000;
    try {
      const load = (durationSec: number) =>
        runWrk({
          url: `${arbiter.url}/api/v1/governance/propose`,
          bodies: generatedProposals(size, 256),
          headers: ADMIN_AUTH,
          connections: 8,
          durationSec,
        });
      await load(settings.warmupSec);
      const result = await load(settings.loadSec);
      if (result.non2xx > 0) throw new Error(`scale: ${result.non2xx} non-2xx answers`);
      return {
        p50: result.p50Ms,
        p99: result.p99Ms,
        rps: result.requestsPerSec,
        rssMiB: await arbiter.rssMiB(),
        startSec,
      };
    } finally {
      await arbiter.stop();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * 4. Scale: propose latency and memory with a small configuration and with 100,000
 * grants, 10,000 capabilities and 10,000 policies (manifests folder), then the initial
 * sync of as many custom resources from a real kube-apiserver.
 */
export async function scaleBench(report: Report, settings: BenchSettings): Promise<void> {
  const large: ConfigSize = { ...settings.scale };
  const small: ConfigSize = { capabilities: 100, policies: 100, grants: 100, grantsPerActor: 100 };
  const name = 'scale';
  const redis = await startRedisServer({ appendfsync: 'everysec' });
  try {
    const s = await measure(small, settings, redis.url);
    const l = await measure(large, settings, redis.url);
    const label = `${large.grants.toLocaleString('en-US')} grants, ${large.capabilities.toLocaleString('en-US')} capabilities, ${large.policies.toLocaleString('en-US')} policies vs 100 of each`;
    report.add({
      benchmark: name,
      metric: `propose p50, 8 connections: ${label}`,
      arbiter: l.p50,
      baseline: s.p50,
      unit: 'ms',
      higherIsBetter: false,
      target: { text: 'large <= 1.2 x small', met: l.p50 <= 1.2 * s.p50 },
    });
    report.add({
      benchmark: name,
      metric: 'propose p99, 8 connections',
      arbiter: l.p99,
      baseline: s.p99,
      unit: 'ms',
      higherIsBetter: false,
    });
    report.add({
      benchmark: name,
      metric: 'propose throughput, 8 connections',
      arbiter: l.rps,
      baseline: s.rps,
      unit: 'req/s',
    });
    report.add({
      benchmark: name,
      metric: 'RSS after load',
      arbiter: l.rssMiB,
      baseline: s.rssMiB,
      unit: 'MiB',
      higherIsBetter: false,
      target: { text: '< 400 MB', met: l.rssMiB * 1.048576 < 400 },
    });
    report.add({
      benchmark: name,
      metric: 'start until ready (manifests folder)',
      arbiter: l.startSec,
      baseline: s.startSec,
      unit: 's',
      higherIsBetter: false,
    });
  } finally {
    await redis.dispose();
  }
  await kubeSync(report, large);
}

async function kubeSync(report: Report, size: ConfigSize): Promise<void> {
  const cp = await startControlPlane();
  try {
    // Compiled, installCrds would look for crds/ beside its own output: name the repository's.
    await installCrds(cp, { dir: join(REPO, 'crds') });
    const objects = generatedObjects(size);
    const t0 = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: 32 }, async () => {
        while (next < objects.length) {
          const o = objects[next++]!;
          const res = await cp.request('POST', `${API_BASE}/${PLURAL[o.kind as string]}`, { body: o });
          if (res.status !== 201)
            throw new Error(`creating ${String(o.kind)}: ${res.status} ${res.text.slice(0, 300)}`);
        }
      }),
    );
    const createSec = (performance.now() - t0) / 1000;
    console.log(
      `  created ${objects.length.toLocaleString('en-US')} custom resources in ${createSec.toFixed(1)} s (32 parallel requests)`,
    );
    const l0 = performance.now();
    for (const plural of Object.values(PLURAL)) {
      const res = await cp.request('GET', `${API_BASE}/${plural}`);
      if (res.status !== 200) throw new Error(`list ${plural}: ${res.status}`);
    }
    const listSec = (performance.now() - l0) / 1000;
    const s0 = performance.now();
    const arbiter = await startArbiter({
      kubeconfig: cp.kubeconfigPath,
      timeoutMs: 300_000,
      extraArgs: ['--lease-namespace', 'default', '--identity', 'bench'],
    });
    const syncSec = (performance.now() - s0) / 1000;
    const rss = await arbiter.rssMiB();
    await arbiter.stop();
    report.add({
      benchmark: 'scale',
      metric: `initial sync of ${objects.length.toLocaleString('en-US')} custom resources, start until ready (baseline: raw LIST of the three kinds)`,
      arbiter: syncSec,
      baseline: listSec,
      unit: 's',
      higherIsBetter: false,
      target: { text: '< 60 s', met: syncSec < 60 },
    });
    report.add({
      benchmark: 'scale',
      metric: 'RSS after the cluster sync',
      arbiter: rss,
      unit: 'MiB',
      target: { text: '< 400 MB', met: rss * 1.048576 < 400 },
    });
  } finally {
    await cp.stop();
  }
}
