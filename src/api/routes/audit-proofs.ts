import { Router } from 'express';
import { cosignedNote } from '../../audit/checkpoint-shape.js';
import { formatTlogProof } from '../../audit/note/tlog-proof.js';
import { ArbiterError } from '../../model/index.js';
import type { ApiDependencies } from '../dependencies.js';
import { makeGuard, stringQuery } from '../handler.js';
import {
  fromTree,
  inclusionProof,
  inclusionProofView,
  latestSigned,
  signedCheckpoints,
} from '../signed-tree.js';

/** A non-negative decimal integer from a path or query value, or a 400 naming it. */
function wholeNumber(raw: unknown, name: string, minimum: number): number {
  const value = typeof raw === 'string' && /^(0|[1-9][0-9]{0,15})$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < minimum) {
    throw new ArbiterError(
      'INVALID_REQUEST',
      `${name} must be a whole number >= ${minimum}, not ${JSON.stringify(raw)}`,
    );
  }
  return value;
}

/**
 * Proofs over the audit log's Merkle tree, against the checkpoints the log signed: the
 * latest signed checkpoint, an entry's inclusion proof (JSON or C2SP tlog-proof), and a
 * consistency proof between two sizes. Sizes past the latest signed checkpoint are 404:
 * a proof is worth only what the signed root it leads to is.
 */
export function auditProofRoutes(deps: ApiDependencies): Router {
  const router = Router();
  const guard = makeGuard(deps);

  // Every retained checkpoint, newest first: signed ones with their cosigned note.
  router.get('/audit/checkpoints', guard('audit:read'), async (_req, res) => {
    const checkpoints = await deps.audit.checkpoints();
    res.json({
      checkpoints: checkpoints
        .map((c) => ({
          seq: c.seq,
          hash: c.hash,
          entry_id: c.entry_id,
          time: c.time,
          note: c.note === undefined ? null : cosignedNote({ ...c, note: c.note }),
        }))
        .reverse(),
    });
  });

  router.get('/audit/checkpoint', guard('audit:read'), async (_req, res) => {
    const latest = latestSigned(await signedCheckpoints(deps.audit));
    res.type('text/plain; charset=utf-8').send(latest.note);
  });

  router.get('/audit/proof/:seq', guard('audit:read'), async (req, res) => {
    const query = stringQuery(req);
    const seq = wholeNumber(req.params.seq, 'seq', 1);
    if (query.format !== undefined && query.format !== 'tlog-proof' && query.format !== 'json') {
      throw new ArbiterError(
        'INVALID_REQUEST',
        `format must be json or tlog-proof, not ${JSON.stringify(query.format)}`,
      );
    }
    const signed = await signedCheckpoints(deps.audit);
    const latest = latestSigned(signed);
    const treeSize =
      query.tree_size === undefined ? latest.size : wholeNumber(query.tree_size, 'tree_size', 1);
    const checkpoint = signed.find((c) => c.size === treeSize);
    if (checkpoint === undefined) {
      throw new ArbiterError(
        'NOT_FOUND',
        `no signed checkpoint of tree size ${treeSize}; signed sizes: ${signed.map((c) => c.size).join(', ')}`,
      );
    }
    if (seq > treeSize) {
      throw new ArbiterError('INVALID_REQUEST', `seq ${seq} is not in the tree of size ${treeSize}`);
    }
    const proof = await inclusionProof(deps.audit, seq, checkpoint);
    if (query.format === 'tlog-proof') {
      res
        .type('text/plain; charset=utf-8')
        .send(formatTlogProof({ index: seq - 1, hashes: proof.hashes, checkpoint: proof.checkpoint }));
      return;
    }
    res.json(inclusionProofView(proof));
  });

  router.get('/audit/consistency', guard('audit:read'), async (req, res) => {
    const query = stringQuery(req);
    const from = wholeNumber(query.from, 'from', 0);
    const to = wholeNumber(query.to, 'to', 0);
    if (from > to)
      throw new ArbiterError('INVALID_REQUEST', `from (${from}) must not be larger than to (${to})`);
    const latest = latestSigned(await signedCheckpoints(deps.audit));
    if (to > latest.size) {
      throw new ArbiterError(
        'NOT_FOUND',
        `size ${to} is beyond the latest signed checkpoint (size ${latest.size})`,
      );
    }
    const hashes = await fromTree(() => deps.audit.tree().consistencyProof(from, to));
    res.json({ from, to, hashes: hashes.map((h) => h.toString('base64')) });
  });

  return router;
}
