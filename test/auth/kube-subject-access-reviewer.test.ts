import { beforeAll, expect, it } from 'vitest';
import { kubeSubjectAccessReviewer } from '../../src/auth/kube-subject-access-reviewer.js';
import { rbacAttributes } from '../../src/auth/rbac-access.js';
import { installControllerRbac } from '../env/controller-rbac.js';
import { describeWithControlPlane } from '../env/describe-with-control-plane.js';
import { create, withUnknownToken } from '../env/control-plane-clients.js';

/** The controller's ServiceAccount in deploy/rbac. */
const CONTROLLER = { namespace: 'arbiter-system', name: 'arbiter' };
const RBAC = '/apis/rbac.authorization.k8s.io/v1';

const approve = (capability?: string) => rbacAttributes('governance:review', 'approve', capability)!;
const list = rbacAttributes('governance:read', 'list')!;

/**
 * kubeSubjectAccessReviewer against a real kube-apiserver with RBAC: the answers RBAC
 * gives for users and groups, names and verbs, and how the review fails when it cannot be
 * made. The chart suite runs it through dist/ (test/chart/reviewers.test.ts); this runs
 * src/ in the test process, so mutation testing reaches it too.
 */
describeWithControlPlane(
  'kubeSubjectAccessReviewer: the SubjectAccessReview API of a real API server',
  (controlPlane) => {
    const asController = () => controlPlane().serviceAccountKubeConfig(CONTROLLER.namespace, CONTROLLER.name);

    beforeAll(async () => {
      const cp = controlPlane();
      await installControllerRbac(cp);
      // deploy-reviewers may approve deploy.production only; alice may list decisions.
      await create(cp, `${RBAC}/clusterroles`, {
        metadata: { name: 'deploy-approver' },
        rules: [
          {
            apiGroups: ['governance.arbiter.dev'],
            resources: ['decisions'],
            resourceNames: ['deploy.production'],
            verbs: ['approve'],
          },
        ],
      });
      await create(cp, `${RBAC}/clusterrolebindings`, {
        metadata: { name: 'deploy-approvers' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'deploy-approver' },
        subjects: [{ kind: 'Group', name: 'deploy-reviewers', apiGroup: 'rbac.authorization.k8s.io' }],
      });
      await create(cp, `${RBAC}/clusterroles`, {
        metadata: { name: 'decision-reader' },
        rules: [{ apiGroups: ['governance.arbiter.dev'], resources: ['decisions'], verbs: ['list'] }],
      });
      await create(cp, `${RBAC}/clusterrolebindings`, {
        metadata: { name: 'alice-reads' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'decision-reader' },
        subjects: [{ kind: 'User', name: 'alice', apiGroup: 'rbac.authorization.k8s.io' }],
      });
    });

    it("answers RBAC's verdict for a user and its groups, asked with deploy/rbac's least privilege", async () => {
      const review = kubeSubjectAccessReviewer(asController());
      const reviewer = { username: 'bob', groups: ['deploy-reviewers'] };
      expect(await review(reviewer, approve('deploy.production'))).toBe(true);
      // The rule names one capability: another, or none, is not granted.
      expect(await review(reviewer, approve('payments.transfer'))).toBe(false);
      expect(await review(reviewer, approve())).toBe(false);
      expect(await review(reviewer, rbacAttributes('governance:review', 'deny', 'deploy.production')!)).toBe(
        false,
      );
      // The groups are sent: without them bob is nobody.
      expect(await review({ username: 'bob', groups: [] }, approve('deploy.production'))).toBe(false);
      // The user is sent: alice may list, bob may not.
      expect(await review({ username: 'alice', groups: [] }, list)).toBe(true);
      expect(await review({ username: 'bob', groups: [] }, list)).toBe(false);
      // The resource and group are sent.
      expect(await review({ username: 'alice', groups: [] }, { ...list, resource: 'auditlog' })).toBe(false);
      expect(await review({ username: 'alice', groups: [] }, { ...list, group: 'example.com' })).toBe(false);
      // system:masters may do anything, as for every authorizer.
      expect(await review({ username: 'root', groups: ['system:masters'] }, approve('x'))).toBe(true);
    });

    it('fails with the status and the reason when RBAC forbids SubjectAccessReviews', async () => {
      // A ServiceAccount without the rule of deploy/rbac.
      const review = kubeSubjectAccessReviewer(controlPlane().serviceAccountKubeConfig('default', 'default'));
      const err = await review({ username: 'bob', groups: [] }, list).then(
        () => undefined,
        (e: unknown) => e as Error,
      );
      expect(err).toBeInstanceOf(Error);
      expect(err!.message).toBe(
        'SubjectAccessReview answered HTTP 403: subjectaccessreviews.authorization.k8s.io is forbidden: ' +
          'User "system:serviceaccount:default:default" cannot create resource "subjectaccessreviews" ' +
          'in API group "authorization.k8s.io" at the cluster scope',
      );
    });

    it("fails with the bare status when the API server refuses the reviewer's own credentials", async () => {
      const review = kubeSubjectAccessReviewer(withUnknownToken(controlPlane()));
      await expect(review({ username: 'bob', groups: [] }, list)).rejects.toThrow(
        /^SubjectAccessReview answered HTTP 401$/,
      );
    });

    it('fails, and never answers, while the API server is down; works again once it is back', async () => {
      const review = kubeSubjectAccessReviewer(asController());
      await controlPlane().stopApiServer();
      try {
        await expect(review({ username: 'alice', groups: [] }, list)).rejects.toThrow(/ECONNREFUSED/);
      } finally {
        await controlPlane().startApiServer();
      }
      expect(await review({ username: 'alice', groups: [] }, list)).toBe(true);
    });
  },
);
