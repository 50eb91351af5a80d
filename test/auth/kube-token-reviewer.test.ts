import { beforeAll, expect, it } from 'vitest';
import { kubeTokenReviewer } from '../../src/auth/kube-token-reviewer.js';
import { installControllerRbac } from '../env/controller-rbac.js';
import { describeWithControlPlane } from '../env/describe-with-control-plane.js';
import { create, withUnknownToken } from '../env/control-plane-clients.js';

const NAMESPACE = 'agents';
/** The controller's ServiceAccount in deploy/rbac. */
const CONTROLLER = { namespace: 'arbiter-system', name: 'arbiter' };
/**
 * kubeTokenReviewer against a real kube-apiserver: what it reports for real tokens, and
 * how it fails when the review cannot be made. The operator suites run it through dist/;
 * this runs src/ in the test process, so mutation testing reaches it too.
 */
describeWithControlPlane(
  'kubeTokenReviewer: the TokenReview API of a real API server',
  (controlPlane) => {
    const asController = () => controlPlane().serviceAccountKubeConfig(CONTROLLER.namespace, CONTROLLER.name);
    /** A token of NAMESPACE/name from the TokenRequest API, as the kubelet mounts into pods. */
    const tokenOf = async (name: string): Promise<string> => {
      const res = await controlPlane().request<any>(
        'POST',
        `/api/v1/namespaces/${NAMESPACE}/serviceaccounts/${name}/token`,
        {
          body: {
            apiVersion: 'authentication.k8s.io/v1',
            kind: 'TokenRequest',
            spec: { expirationSeconds: 3600 },
          },
        },
      );
      expect(res.status, res.text).toBe(201);
      return res.body.status.token as string;
    };
    const createServiceAccount = (name: string) =>
      create(controlPlane(), `/api/v1/namespaces/${NAMESPACE}/serviceaccounts`, { metadata: { name } });
    /** The review's error, which must not be a success. */
    const failureOf = async (review: Promise<unknown>): Promise<Error> => {
      const outcome = await review.then(
        (result) => ({ result }),
        (err: unknown) => ({ err }),
      );
      if (!('err' in outcome)) throw new Error(`expected a failure, got ${JSON.stringify(outcome.result)}`);
      expect(outcome.err).toBeInstanceOf(Error);
      return outcome.err as Error;
    };

    let planner: string;

    beforeAll(async () => {
      await installControllerRbac(controlPlane());
      await create(controlPlane(), '/api/v1/namespaces', { metadata: { name: NAMESPACE } });
      await createServiceAccount('planner');
      planner = await tokenOf('planner');
    });

    it("says whose token it is, asked with deploy/rbac's least privilege", async () => {
      expect(await kubeTokenReviewer(asController())(planner)).toEqual({
        authenticated: true,
        username: 'system:serviceaccount:agents:planner',
        groups: ['system:serviceaccounts', 'system:serviceaccounts:agents', 'system:authenticated'],
      });
    });

    it('reports a user that is no ServiceAccount by the name and groups the API server gives', async () => {
      const carol = controlPlane().users.carol!.token;
      expect(await kubeTokenReviewer(asController())(carol)).toEqual({
        authenticated: true,
        username: 'carol',
        groups: ['reviewers', 'oncall', 'system:authenticated'],
      });
    });

    it('does not authenticate a forged token, garbage, or the token of a deleted ServiceAccount', async () => {
      const review = kubeTokenReviewer(asController());
      const [header, payload] = planner.split('.');
      expect(await review(`${header}.${payload}.forged-signature`)).toEqual({ authenticated: false });
      expect(await review('garbage')).toEqual({ authenticated: false });

      // The API server learns of the deletion from its informer, a moment later: from then on
      // it refuses the token minted before.
      await createServiceAccount('temporary');
      const orphan = await tokenOf('temporary');
      const deleted = await controlPlane().request(
        'DELETE',
        `/api/v1/namespaces/${NAMESPACE}/serviceaccounts/temporary`,
      );
      expect(deleted.status, deleted.text).toBe(200);
      await expect
        .poll(() => review(orphan), { timeout: 15_000, interval: 200 })
        .toEqual({ authenticated: false });
    });

    it('fails with the status and the reason when RBAC forbids TokenReviews, never with the token', async () => {
      // A ServiceAccount without the TokenReview rule of deploy/rbac.
      const review = kubeTokenReviewer(controlPlane().serviceAccountKubeConfig(NAMESPACE, 'planner'));
      const err = await failureOf(review(planner));
      expect(err.message).toBe(
        'TokenReview answered HTTP 403: tokenreviews.authentication.k8s.io is forbidden: ' +
          'User "system:serviceaccount:agents:planner" cannot create resource "tokenreviews" ' +
          'in API group "authentication.k8s.io" at the cluster scope',
      );
      expect(JSON.stringify({ ...err, message: err.message })).not.toContain(planner);
    });

    it("keeps at most 512 characters of the API server's message", async () => {
      // The refusal names the user: a long name makes a long message.
      const review = kubeTokenReviewer(controlPlane().serviceAccountKubeConfig(NAMESPACE, 'x'.repeat(600)));
      const err = await failureOf(review(planner));
      expect(err.message).toMatch(
        /^TokenReview answered HTTP 403: tokenreviews\.authentication\.k8s\.io is forbidden: User "system:serviceaccount:agents:x+$/,
      );
      expect(err.message).toHaveLength('TokenReview answered HTTP 403: '.length + 512);
    });

    it("fails with the bare status when the API server refuses the reviewer's own credentials", async () => {
      const err = await failureOf(kubeTokenReviewer(withUnknownToken(controlPlane()))(planner));
      expect(err.message).toBe('TokenReview answered HTTP 401');
    });

    // What the authenticator makes of a failed review (UNAVAILABLE, never a principal) is
    // unit-tested next to it and run end to end by test/operator/service-account-tokens.
    it('fails, and never answers, while the API server is down; works again once it is back', async () => {
      const review = kubeTokenReviewer(asController());
      await controlPlane().stopApiServer();
      try {
        const err = await failureOf(review(planner));
        expect(err.message).toMatch(/ECONNREFUSED/);
        expect(JSON.stringify({ ...err, message: err.message })).not.toContain(planner);
      } finally {
        await controlPlane().startApiServer();
      }
      expect(await review(planner)).toMatchObject({ authenticated: true });
    });
  },
  { users: { carol: { groups: ['reviewers', 'oncall'] } } },
);
