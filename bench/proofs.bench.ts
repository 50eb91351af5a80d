import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StoredAuditTree } from '../src/audit/audit-tree.js';
import { openLogFile } from '../src/audit/file/log-file.js';
import { TreeFile } from '../src/audit/file/tree-file.js';
import { leafHash } from '../src/audit/merkle/tree-hash.js';
import { verifyInclusion } from '../src/audit/merkle/verify-inclusion.js';
import type { Report } from './support/report.js';
import type { BenchSettings } from './support/settings.js';

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/**
 * Merkle proofs over a large audit tree (audit.tree of the file backend): inclusion-proof
 * generation p50/p99 at the full size against plain reads of as many random 32-byte
 * records (the least a proof must read), and proof verification against raw SHA-256 of
 * as many 64-byte node inputs.
 */
export async function proofsBench(report: Report, settings: BenchSettings): Promise<void> {
  const leaves = settings.queryEntries;
  const dir = await mkdtemp(join(tmpdir(), 'arbiter-bench-tree-'));
  try {
    const file = await openLogFile(join(dir, 'audit.tree'));
    const tree = await TreeFile.open(file);
    const t0 = performance.now();
    for (let from = 0; from < leaves; from += 10_000) {
      const batch = Array.from({ length: Math.min(10_000, leaves - from) }, (_, i) =>
        leafHash(`entry ${from + i}`),
      );
      await tree.append(batch);
    }
    await tree.sync();
    console.log(
      `  built a tree of ${leaves.toLocaleString('en-US')} leaves in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
    );
    const stored = new StoredAuditTree(tree);
    const root = await stored.root(leaves);
    const samples = settings.quick ? 200 : 1000;
    const indices = Array.from({ length: samples }, () => Math.floor(Math.random() * leaves));
    const proofMs: number[] = [];
    const proofs: Buffer[][] = [];
    const readMs: number[] = [];
    const depth = Math.ceil(Math.log2(leaves));
    const recordCount = Math.floor((await file.size()) / 32);
    // Proof and baseline alternate, so a pause of the machine or the collector hits both alike.
    for (const index of indices) {
      const start = performance.now();
      proofs.push(await stored.inclusionProof(index, leaves));
      proofMs.push(performance.now() - start);
      // Baseline: as many positional reads of random 32-byte records as a proof has hashes.
      const readStart = performance.now();
      await Promise.all(
        Array.from({ length: depth }, () => file.read(32, Math.floor(Math.random() * recordCount) * 32)),
      );
      readMs.push(performance.now() - readStart);
    }
    proofMs.sort((a, b) => a - b);
    readMs.sort((a, b) => a - b);
    for (const p of [50, 99]) {
      report.add({
        benchmark: 'merkle proofs',
        metric: `inclusion proof p${p} over ${leaves.toLocaleString('en-US')} entries (vs ${depth} random record reads)`,
        arbiter: percentile(proofMs, p),
        baseline: percentile(readMs, p),
        unit: 'ms',
        higherIsBetter: false,
        target: { text: '< 5 ms', met: percentile(proofMs, p) < 5 },
      });
    }
    // Verification of every sampled proof, against raw SHA-256 of as many 64-byte node inputs.
    const leavesOf = indices.map((i) => leafHash(`entry ${i}`));
    const verifyStart = performance.now();
    indices.forEach((index, i) => verifyInclusion(index, leaves, leavesOf[i]!, proofs[i]!, root));
    const verifyMs = (performance.now() - verifyStart) / samples;
    const input = randomBytes(65);
    const rawStart = performance.now();
    for (let s = 0; s < samples * (depth + 1); s++) createHash('sha256').update(input).digest();
    const rawMs = (performance.now() - rawStart) / samples;
    report.add({
      benchmark: 'merkle proofs',
      metric: `verify one inclusion proof (${depth} hashes; vs ${depth + 1} raw SHA-256 of 65 bytes)`,
      arbiter: verifyMs * 1000,
      baseline: rawMs * 1000,
      unit: 'µs',
      higherIsBetter: false,
    });
    await tree.close();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
