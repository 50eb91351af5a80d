import { describe, expect, it } from 'vitest';
import { failurePolicyRisk } from './failure-policy.js';

describe('failurePolicyRisk: the log line an operator reads', () => {
  const ignoreTail =
    ': while Arbiter is down or slower than the webhook timeout, the Kubernetes API requests of governed ' +
    'agents are ALLOWED WITHOUT A DECISION OR AUDIT ENTRY; --admission-failure-policy Fail refuses them instead';

  it('explains Ignore on a server with matchConditions without more ado', () => {
    expect(failurePolicyRisk({ major: 1, minor: 28 }, 'Ignore')).toBe(
      `the governance webhook runs with failurePolicy Ignore${ignoreTail}`,
    );
  });

  it('explains why Ignore is the default before matchConditions, naming the server version', () => {
    expect(failurePolicyRisk({ major: 1, minor: 27 }, 'Ignore')).toBe(
      'the governance webhook runs with failurePolicy Ignore (Kubernetes 1.27 predates matchConditions (1.28), ' +
        `so with Fail every write in the cluster would depend on Arbiter)${ignoreTail}`,
    );
  });

  it('warns that Fail before matchConditions blocks every write, and how to recover', () => {
    expect(failurePolicyRisk({ major: 1, minor: 25 }, 'Fail')).toBe(
      'the governance webhook runs with failurePolicy Fail on Kubernetes 1.25, which predates matchConditions ' +
        '(1.28): while Arbiter is down, EVERY write to the cluster is refused, not only those of governed agents, ' +
        "except in kube-system, Arbiter's namespace and namespaces labelled governance.arbiter.dev/ignore; " +
        'to recover without Arbiter: kubectl delete validatingwebhookconfiguration arbiter-governance',
    );
  });

  it('tells an operator before 1.21 to label the system namespaces themselves', () => {
    expect(failurePolicyRisk({ major: 1, minor: 20 }, 'Fail')).toContain(
      "except in namespaces labelled governance.arbiter.dev/ignore (label kube-system and Arbiter's namespace " +
        'too: their kubernetes.io/metadata.name label exists only from Kubernetes 1.21); ',
    );
  });
});
