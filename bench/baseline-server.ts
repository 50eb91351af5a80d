import express from 'express';

/**
 * The baseline of the propose benchmark: the same framework, the same JSON body parser
 * (1 MiB limit, strict), a fixed JSON answer of a decision's size. No auth, no engine,
 * no audit: what Arbiter's propose costs on top of this is Arbiter's own.
 */
const port = Number(process.argv[2]);
const app = express();
app.disable('x-powered-by');
app.set('etag', false);
const decision = {
  decision_id: '9b0c5f0e-8d8a-4a64-9a39-6f1f3f0e2a11',
  outcome: 'ALLOW',
  reason: 'granted; no policy rule matched',
  risk_score: 0.2,
  constraints: {},
  timestamp: '2026-11-22T10:00:00.000Z',
  audit_ref: 'aud_5f0e8d8a-4a64-9a39-6f1f3f0e2a11',
};
app.get('/healthz', (_req, res) => {
  res.json({ status: 'ok' });
});
app.post('/api/v1/governance/propose', express.json({ limit: 1024 * 1024, strict: true }), (req, res) => {
  if (typeof req.body !== 'object' || req.body === null) {
    res.status(400).json({ error: { code: 'INVALID_REQUEST' } });
    return;
  }
  res.json(decision);
});
app.listen(port, '127.0.0.1');
