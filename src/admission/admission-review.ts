import { compileValidator } from '../api/validation.js';

/** admission.k8s.io/v1 AdmissionReview: what the API server sends to a webhook. */
export const ADMISSION_REVIEW_VERSION = 'admission.k8s.io/v1';

export type AdmissionOperation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

export interface GroupVersionResource {
  group: string;
  version: string;
  resource: string;
}

export interface AdmissionRequest {
  uid: string;
  kind: { group: string; version: string; kind: string };
  resource: GroupVersionResource;
  subResource?: string;
  name?: string;
  namespace?: string;
  operation: AdmissionOperation;
  userInfo: { username?: string; uid?: string; groups?: string[] };
  object?: Record<string, unknown> | null;
  oldObject?: Record<string, unknown> | null;
  dryRun?: boolean;
}

export interface AdmissionResponse {
  uid: string;
  allowed: boolean;
  status?: { code: number; message: string };
  warnings?: string[];
}

const gvr = {
  type: 'object',
  required: ['group', 'version', 'resource'],
  properties: { group: { type: 'string' }, version: { type: 'string' }, resource: { type: 'string' } },
} as const;

const reviewSchema = {
  type: 'object',
  required: ['apiVersion', 'kind', 'request'],
  properties: {
    apiVersion: { const: ADMISSION_REVIEW_VERSION },
    kind: { const: 'AdmissionReview' },
    request: {
      type: 'object',
      required: ['uid', 'kind', 'resource', 'operation', 'userInfo'],
      properties: {
        uid: { type: 'string', minLength: 1, maxLength: 128 },
        kind: {
          type: 'object',
          required: ['group', 'version', 'kind'],
          properties: { group: { type: 'string' }, version: { type: 'string' }, kind: { type: 'string' } },
        },
        resource: gvr,
        subResource: { type: 'string' },
        name: { type: 'string' },
        namespace: { type: 'string' },
        operation: { enum: ['CREATE', 'UPDATE', 'DELETE', 'CONNECT'] },
        userInfo: {
          type: 'object',
          properties: {
            username: { type: 'string' },
            uid: { type: 'string' },
            groups: { type: 'array', items: { type: 'string' } },
          },
        },
        object: { type: ['object', 'null'] },
        oldObject: { type: ['object', 'null'] },
        dryRun: { type: 'boolean' },
      },
    },
  },
} as const;

const validateReview = compileValidator<{ request: AdmissionRequest }>(reviewSchema, 'AdmissionReview');

/** The request of an AdmissionReview body; throws INVALID_REQUEST naming what is wrong. */
export function admissionRequestOf(body: unknown): AdmissionRequest {
  return validateReview(body).request;
}

/** The AdmissionReview answer for `response`. */
export function admissionReview(response: AdmissionResponse): Record<string, unknown> {
  return { apiVersion: ADMISSION_REVIEW_VERSION, kind: 'AdmissionReview', response };
}

export function allow(uid: string, warnings: readonly string[] = []): AdmissionResponse {
  return { uid, allowed: true, ...(warnings.length > 0 ? { warnings: [...warnings] } : {}) };
}

/**
 * A refusal; kubectl shows `message` after "admission webhook ... denied the request:".
 * No `reason`: with reason Invalid and no field causes, kubectl would print only "The
 * request is invalid" and swallow the message.
 */
export function refuse(uid: string, code: 403 | 422, message: string): AdmissionResponse {
  return { uid, allowed: false, status: { code, message } };
}
