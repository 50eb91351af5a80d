import { describe, expect, it } from 'vitest';
import { ArbiterError } from '../model/index.js';
import { admissionRequestOf, admissionReview, allow, refuse } from './admission-review.js';
import { configMapRequest } from './test-requests.js';

const review = (request: unknown = configMapRequest()) => ({
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  request,
});
const withRequest = (change: Record<string, unknown>) => review({ ...configMapRequest(), ...change });
const without = (field: string) => {
  const request: Record<string, unknown> = { ...configMapRequest() };
  delete request[field];
  return review(request);
};

function problemOf(body: unknown): string {
  try {
    admissionRequestOf(body);
  } catch (err) {
    expect(err).toBeInstanceOf(ArbiterError);
    expect((err as ArbiterError).code).toBe('INVALID_REQUEST');
    return (err as ArbiterError).message;
  }
  throw new Error('the review was accepted');
}

describe('admissionRequestOf', () => {
  it('returns the request of a well-formed admission.k8s.io/v1 AdmissionReview', () => {
    const body = review();
    expect(admissionRequestOf(body)).toBe(body.request);
  });

  it('accepts the least the API server sends, and null objects (a DELETE, a CONNECT)', () => {
    const least = {
      uid: 'x'.repeat(128),
      kind: { group: '', version: 'v1', kind: 'Pod' },
      resource: { group: '', version: 'v1', resource: 'pods' },
      operation: 'CONNECT',
      userInfo: {},
    };
    expect(admissionRequestOf(review(least))).toEqual(least);
    const deletion = { ...configMapRequest({ operation: 'DELETE' }), object: null, oldObject: null };
    expect(admissionRequestOf(review(deletion)).operation).toBe('DELETE');
    for (const operation of ['CREATE', 'UPDATE'])
      expect(admissionRequestOf(withRequest({ operation })).operation).toBe(operation);
  });

  it.each([
    ['an array', [], '(body) must be object'],
    ['null', null, '(body) must be object'],
    [
      'another version',
      { ...review(), apiVersion: 'admission.k8s.io/v1beta1' },
      'apiVersion must be admission.k8s.io/v1',
    ],
    ['another kind', { ...review(), kind: 'AdmissionResponse' }, 'kind must be AdmissionReview'],
    ['no request', { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' }, 'request is required'],
    ['a request that is no object', review('x'), 'request must be object'],
    ['an empty uid', withRequest({ uid: '' }), 'request.uid must NOT have fewer than 1 characters'],
    [
      'a uid over 128 characters',
      withRequest({ uid: 'x'.repeat(129) }),
      'request.uid must NOT have more than 128 characters',
    ],
    ['a numeric uid', withRequest({ uid: 5 }), 'request.uid must be string'],
    ['no uid', without('uid'), 'request.uid is required'],
    ['no kind', without('kind'), 'request.kind is required'],
    ['no resource', without('resource'), 'request.resource is required'],
    ['no operation', without('operation'), 'request.operation is required'],
    ['no userInfo', without('userInfo'), 'request.userInfo is required'],
    ['a kind that is no object', withRequest({ kind: 'ConfigMap' }), 'request.kind must be object'],
    [
      'a kind without group',
      withRequest({ kind: { version: 'v1', kind: 'ConfigMap' } }),
      'request.kind.group is required',
    ],
    [
      'a kind without version',
      withRequest({ kind: { group: '', kind: 'ConfigMap' } }),
      'request.kind.version is required',
    ],
    [
      'a kind without kind',
      withRequest({ kind: { group: '', version: 'v1' } }),
      'request.kind.kind is required',
    ],
    [
      'a numeric kind group',
      withRequest({ kind: { group: 1, version: 'v1', kind: 'ConfigMap' } }),
      'request.kind.group must be string',
    ],
    [
      'a numeric kind version',
      withRequest({ kind: { group: '', version: 1, kind: 'ConfigMap' } }),
      'request.kind.version must be string',
    ],
    [
      'a numeric kind kind',
      withRequest({ kind: { group: '', version: 'v1', kind: 1 } }),
      'request.kind.kind must be string',
    ],
    [
      'a resource that is no object',
      withRequest({ resource: 'configmaps' }),
      'request.resource must be object',
    ],
    [
      'a resource without group',
      withRequest({ resource: { version: 'v1', resource: 'configmaps' } }),
      'request.resource.group is required',
    ],
    [
      'a resource without version',
      withRequest({ resource: { group: '', resource: 'configmaps' } }),
      'request.resource.version is required',
    ],
    [
      'a resource without resource',
      withRequest({ resource: { group: '', version: 'v1' } }),
      'request.resource.resource is required',
    ],
    [
      'a numeric resource group',
      withRequest({ resource: { group: 1, version: 'v1', resource: 'x' } }),
      'request.resource.group must be string',
    ],
    [
      'a numeric resource version',
      withRequest({ resource: { group: '', version: 1, resource: 'x' } }),
      'request.resource.version must be string',
    ],
    [
      'a numeric resource resource',
      withRequest({ resource: { group: '', version: 'v1', resource: 1 } }),
      'request.resource.resource must be string',
    ],
    ['a numeric subResource', withRequest({ subResource: 1 }), 'request.subResource must be string'],
    ['a numeric name', withRequest({ name: 1 }), 'request.name must be string'],
    ['a numeric namespace', withRequest({ namespace: 1 }), 'request.namespace must be string'],
    [
      'an unknown operation',
      withRequest({ operation: 'PATCH' }),
      'request.operation must be one of CREATE, UPDATE, DELETE, CONNECT',
    ],
    ['a userInfo that is no object', withRequest({ userInfo: 'alice' }), 'request.userInfo must be object'],
    [
      'a numeric username',
      withRequest({ userInfo: { username: 1 } }),
      'request.userInfo.username must be string',
    ],
    ['a numeric user uid', withRequest({ userInfo: { uid: 1 } }), 'request.userInfo.uid must be string'],
    [
      'groups that are no array',
      withRequest({ userInfo: { groups: 'admins' } }),
      'request.userInfo.groups must be array',
    ],
    [
      'a numeric group',
      withRequest({ userInfo: { groups: [1] } }),
      'request.userInfo.groups.0 must be string',
    ],
    ['an object that is a string', withRequest({ object: 'x' }), 'request.object must be object,null'],
    ['an object that is an array', withRequest({ object: [] }), 'request.object must be object,null'],
    ['an oldObject that is a number', withRequest({ oldObject: 5 }), 'request.oldObject must be object,null'],
    ['a dryRun that is a string', withRequest({ dryRun: 'true' }), 'request.dryRun must be boolean'],
  ])('refuses %s with INVALID_REQUEST naming the field', (_name, body, problem) => {
    expect(problemOf(body)).toBe(`invalid AdmissionReview: ${problem}`);
  });
});

describe('answers', () => {
  it('wrap a response in an admission.k8s.io/v1 AdmissionReview', () => {
    const response = allow('u-1');
    expect(admissionReview(response)).toEqual({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      response: { uid: 'u-1', allowed: true },
    });
  });

  it('allow: the uid and allowed, with warnings only when there are some (a copy)', () => {
    expect(allow('u-1')).toEqual({ uid: 'u-1', allowed: true });
    expect(allow('u-1', [])).toEqual({ uid: 'u-1', allowed: true });
    expect(allow('u-1', [])).not.toHaveProperty('warnings');
    const warnings = ['Policy ahead: unknown capability'];
    const response = allow('u-2', warnings);
    warnings.push('later');
    expect(response).toEqual({ uid: 'u-2', allowed: true, warnings: ['Policy ahead: unknown capability'] });
  });

  it('refuse: allowed false with the code and the message, and no reason', () => {
    expect(refuse('u-3', 422, 'InvalidCondition: bad')).toEqual({
      uid: 'u-3',
      allowed: false,
      status: { code: 422, message: 'InvalidCondition: bad' },
    });
  });
});
