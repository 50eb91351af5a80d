import { Router } from 'express';
import type { Written } from '../../governance/config-writer.js';
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
  return status ? { ready: status.ready, reason: status.reason, message: status.message } : null;
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

function policyView(policy: IndexedPolicy) {
  return {
    id: policy.name,
    name: policy.name,
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

  router.get('/policies', guard('governance:read'), (req, res) => {
    const query = validateList(stringQuery(req));
    const limit = parseLimit(query.limit);
    const policies = deps.index.current().policies();
    const after = decodeCursor<string>(query.cursor, 'policies', 'string');
    const { page, next } = pageByKey(policies, (p) => p.name, limit, after);
    res.json({
      policies: page.map(policyView),
      total: policies.length,
      cursor: next === null ? null : encodeCursor(next, 'policies'),
    });
  });

  router.get('/policies/:id', guard('governance:read'), (req, res) => {
    const policy = deps.index.current().policy(String(req.params.id));
    if (!policy) throw new ArbiterError('NOT_FOUND', `no policy ${String(req.params.id)}`);
    res.json(policyView(policy));
  });

  router.post('/policies', guard('policies:manage'), jsonBody, async (req, res) => {
    const { name, ...spec } = fromWire<PolicySpec & { name: string }>(validatePolicyCreate(req.body));
    await deps.config.createPolicy(name, spec, principalOf(req));
    res.status(201).json(policyView(deps.index.current().policy(name)!));
  });

  router.put('/policies/:id', guard('policies:manage'), jsonBody, async (req, res) => {
    const id = String(req.params.id);
    const { name, ...spec } = fromWire<PolicySpec & { name?: string }>(validatePolicyUpdate(req.body));
    if (name !== undefined && name !== id)
      throw new ArbiterError('INVALID_REQUEST', `body name ${name} differs from the path's ${id}`);
    await deps.config.updatePolicy(id, spec, principalOf(req));
    res.json(policyView(deps.index.current().policy(id)!));
  });

  router.delete('/policies/:id', guard('policies:manage'), async (req, res) => {
    const id = String(req.params.id);
    await deps.config.deletePolicy(id, principalOf(req));
    res.json({ id, deleted: true });
  });

  router.delete('/capabilities/:name', guard('capabilities:manage'), async (req, res) => {
    const name = String(req.params.name);
    const objects = await deps.config.deleteCapability(name, principalOf(req));
    res.json({ name, deleted: true, objects });
  });

  router.get('/actors/:id/grants', guard('governance:read'), (req, res) => {
    const query = validateList(stringQuery(req));
    const limit = parseLimit(query.limit);
    const actorId = String(req.params.id);
    const grants = [...deps.index.current().grantsOfActor(actorId)].sort((a, b) =>
      compareText(keyOf(a), keyOf(b)),
    );
    const scope = `grants:${actorId}`;
    const after = decodeCursor<string>(query.cursor, scope, 'string');
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
      cursor: next === null ? null : encodeCursor(next, scope),
    });
  });

  router.post('/actors/:id/grants', guard('grants:manage'), jsonBody, async (req, res) => {
    const actorId = String(req.params.id);
    if (actorId.length > 256)
      throw new ArbiterError('INVALID_REQUEST', 'actor id is longer than 256 characters');
    const { actorType, ...grant } = fromWire<GrantSpec & { actorType?: ActorType }>(validateGrant(req.body));
    const written = await deps.config.grant(
      { id: actorId, ...(actorType ? { type: actorType } : {}) },
      grant,
      principalOf(req),
    );
    res.status(written.created ? 201 : 200).json({
      actor_id: actorId,
      capability: grant.capability,
      constraints: toWire(grant.constraints ?? {}),
      ...writtenView(written),
    });
  });

  router.delete('/actors/:id/grants/:capability', guard('grants:manage'), async (req, res) => {
    const actorId = String(req.params.id);
    const capability = String(req.params.capability);
    const revoked = await deps.config.revoke(actorId, capability, principalOf(req));
    res.json({ actor_id: actorId, capability, revoked });
  });

  return router;
}
