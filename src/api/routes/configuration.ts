import { Router } from 'express';
import { namedIn, type Written } from '../../governance/config-writer.js';
import type { IndexedCapability, IndexedGrant, IndexedPolicy } from '../../index/index.js';
import {
  ArbiterError,
  type ActorType,
  type CapabilitySpec,
  type ConfigObject,
  type GrantSpec,
  type ObjectStatus,
  type PolicySpec,
} from '../../model/index.js';
import type { ApiDependencies } from '../dependencies.js';
import { makeGuard, principalOf, stringQuery } from '../handler.js';
import { CLUSTER_SCOPE, NAMESPACE_SCOPE, type ConfigScope } from './config-scope.js';
import { jsonBody } from '../json-body.js';
import { decodeCursor, encodeCursor, pageByKey, parseLimit } from '../paging.js';
import {
  capabilityBodySchema,
  grantBodySchema,
  listQuerySchema,
  policyCreateSchema,
  policyUpdateSchema,
} from '../request-schemas.js';
import { compileValidator } from '../validation.js';
import { fromWire, toWire } from '../wire-format.js';

const validateList = compileValidator<{ limit?: string; cursor?: string }>(listQuerySchema, 'query');
const validateCapability = compileValidator<Record<string, unknown>>(capabilityBodySchema, 'capability');
const validatePolicyCreate = compileValidator<Record<string, unknown>>(policyCreateSchema, 'policy');
const validatePolicyUpdate = compileValidator<Record<string, unknown>>(policyUpdateSchema, 'policy');
const validateGrant = compileValidator<Record<string, unknown>>(grantBodySchema, 'grant');

function statusView(status: ObjectStatus | undefined) {
  if (!status) return null;
  const { ready, reason, message, outsideDelegation } = status;
  return { ready, reason, message, ...(outsideDelegation ? { outside_delegation: outsideDelegation } : {}) };
}

function capabilityView(capability: IndexedCapability) {
  return {
    id: capability.id,
    name: capability.spec.name,
    description: capability.spec.description ?? '',
    risk_level: capability.spec.riskLevel,
    parameter_schema: capability.spec.parameterSchema ?? {},
    ...(capability.spec.mcp ? { mcp: toWire(capability.spec.mcp) } : {}),
    created_at: capability.createdAt ?? null,
  };
}

/** A policy as the API shows it; a namespace's carry their namespace. */
function policyView(policy: IndexedPolicy, namespace: string | undefined) {
  return {
    id: policy.name,
    name: policy.name,
    ...(namespace === undefined ? {} : { namespace }),
    description: policy.spec.description ?? '',
    rules: toWire(policy.spec.rules),
    enabled: policy.enabled,
    enforcement_action: policy.spec.enforcementAction ?? 'enforce',
    created_at: policy.createdAt ?? null,
    status: statusView(policy.status),
  };
}

/** Grants sort by capability, then by the object that grants it. */
const keyOf = (g: IndexedGrant) =>
  `${g.capability}\u0000${g.source}\u0000${String(g.grantIndex).padStart(6, '0')}`;
const compareText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

function writtenView<T extends ConfigObject>(written: Written<T>) {
  return { id: written.object.metadata.name, status: statusView(written.status) };
}

type Guard = ReturnType<typeof makeGuard>;

export function configurationRoutes(deps: ApiDependencies): Router {
  const router = Router();
  const guard = makeGuard(deps);

  router.get('/capabilities', guard('governance:read'), (req, res) => {
    const query = validateList(stringQuery(req));
    const limit = parseLimit(query.limit);
    const capabilities = deps.index.current().capabilities();
    const after = decodeCursor<string>(query.cursor, 'capabilities', 'string');
    const { page, next } = pageByKey(capabilities, (c) => c.name, limit, after);
    res.json({
      capabilities: page.map(capabilityView),
      total: capabilities.length,
      cursor: next === null ? null : encodeCursor(next, 'capabilities'),
    });
  });

  router.post('/capabilities', guard('capabilities:manage'), jsonBody, async (req, res) => {
    const spec = fromWire<CapabilitySpec>(validateCapability(req.body));
    const written = await deps.config.registerCapability(spec, principalOf(req));
    const registered = deps.index.current().capability(spec.name);
    res
      .status(201)
      .json({ ...(registered ? capabilityView(registered) : { name: spec.name }), ...writtenView(written) });
  });

  router.delete('/capabilities/:name', guard('capabilities:manage'), async (req, res) => {
    const name = String(req.params.name);
    const objects = await deps.config.deleteCapability(name, principalOf(req));
    res.json({ name, deleted: true, objects });
  });

  for (const scope of [CLUSTER_SCOPE, NAMESPACE_SCOPE]) scopedRoutes(router, guard, deps, scope);
  return router;
}

/**
 * The policy and grant routes of one scope: the cluster's, or a namespace's (issue #38),
 * with the same bodies, answers, errors and audit events.
 */
function scopedRoutes(router: Router, guard: Guard, deps: ApiDependencies, scope: ConfigScope): void {
  const { prefix } = scope;
  const policyAt = (namespace: string | undefined, id: string) => {
    const policy = scope.policies(deps.index.current(), namespace).find((p) => p.name === id);
    if (!policy) throw new ArbiterError('NOT_FOUND', `no policy ${namedIn(id, namespace)}`);
    return policyView(policy, namespace);
  };

  router.get(`${prefix}/policies`, guard('governance:read', scope.access('policies', 'list')), (req, res) => {
    const namespace = scope.namespaceOf(req);
    const query = validateList(stringQuery(req));
    const limit = parseLimit(query.limit);
    const policies = scope.policies(deps.index.current(), namespace);
    const cursorScope = namespace === undefined ? 'policies' : `policies:${namespace}`;
    const after = decodeCursor<string>(query.cursor, cursorScope, 'string');
    const { page, next } = pageByKey(policies, (p) => p.name, limit, after);
    res.json({
      policies: page.map((p) => policyView(p, namespace)),
      total: policies.length,
      cursor: next === null ? null : encodeCursor(next, cursorScope),
    });
  });

  router.get(
    `${prefix}/policies/:id`,
    guard('governance:read', scope.access('policies', 'get')),
    (req, res) => {
      res.json(policyAt(scope.namespaceOf(req), String(req.params.id)));
    },
  );

  router.post(
    `${prefix}/policies`,
    guard('policies:manage', scope.access('policies', 'create')),
    jsonBody,
    async (req, res) => {
      const namespace = scope.namespaceOf(req);
      const { name, ...spec } = fromWire<PolicySpec & { name: string }>(validatePolicyCreate(req.body));
      await deps.config.createPolicy(name, spec, principalOf(req), namespace);
      res.status(201).json(policyAt(namespace, name));
    },
  );

  router.put(
    `${prefix}/policies/:id`,
    guard('policies:manage', scope.access('policies', 'update')),
    jsonBody,
    async (req, res) => {
      const namespace = scope.namespaceOf(req);
      const id = String(req.params.id);
      const { name, ...spec } = fromWire<PolicySpec & { name?: string }>(validatePolicyUpdate(req.body));
      if (name !== undefined && name !== id)
        throw new ArbiterError('INVALID_REQUEST', `body name ${name} differs from the path's ${id}`);
      await deps.config.updatePolicy(id, spec, principalOf(req), namespace);
      res.json(policyAt(namespace, id));
    },
  );

  router.delete(
    `${prefix}/policies/:id`,
    guard('policies:manage', scope.access('policies', 'delete')),
    async (req, res) => {
      const id = String(req.params.id);
      await deps.config.deletePolicy(id, principalOf(req), scope.namespaceOf(req));
      res.json({ id, deleted: true });
    },
  );

  router.get(
    `${prefix}/actors/:id/grants`,
    guard('governance:read', scope.access('actorgrants', 'list')),
    (req, res) => {
      const query = validateList(stringQuery(req));
      const limit = parseLimit(query.limit);
      const actorId = scope.actorId(String(req.params.id), scope.namespaceOf(req));
      const grants = [...scope.grantsOfActor(deps.index.current(), actorId)].sort((a, b) =>
        compareText(keyOf(a), keyOf(b)),
      );
      const cursorScope = `grants:${actorId}`;
      const after = decodeCursor<string>(query.cursor, cursorScope, 'string');
      const { page, next } = pageByKey(grants, keyOf, limit, after);
      res.json({
        actor_id: actorId,
        grants: page.map((g) => ({
          actor_id: actorId,
          capability: g.capability,
          constraints: toWire(g.constraints),
          source: g.source,
        })),
        total: grants.length,
        cursor: next === null ? null : encodeCursor(next, cursorScope),
      });
    },
  );

  router.post(
    `${prefix}/actors/:id/grants`,
    guard('grants:manage', scope.access('actorgrants', 'create')),
    jsonBody,
    async (req, res) => {
      const namespace = scope.namespaceOf(req);
      const localId = String(req.params.id);
      const actorId = scope.actorId(localId, namespace);
      const { actorType, ...grant } = fromWire<GrantSpec & { actorType?: ActorType }>(
        validateGrant(req.body),
      );
      const written = await deps.config.grant(
        { id: localId, ...(actorType ? { type: actorType } : {}) },
        grant,
        principalOf(req),
        namespace,
      );
      res.status(written.created ? 201 : 200).json({
        actor_id: actorId,
        capability: grant.capability,
        constraints: toWire(grant.constraints ?? {}),
        ...writtenView(written),
      });
    },
  );

  router.delete(
    `${prefix}/actors/:id/grants/:capability`,
    guard('grants:manage', scope.access('actorgrants', 'delete')),
    async (req, res) => {
      const namespace = scope.namespaceOf(req);
      const localId = String(req.params.id);
      const actorId = scope.actorId(localId, namespace);
      const capability = String(req.params.capability);
      const revoked = await deps.config.revoke(localId, capability, principalOf(req), namespace);
      res.json({ actor_id: actorId, capability, revoked });
    },
  );
}
