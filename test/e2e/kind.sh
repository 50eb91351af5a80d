#!/usr/bin/env bash
# End to end on a real cluster, for users with Docker: create a kind cluster, build the
# image and load it, install Redis and the chart, apply the example configuration,
# propose through the Service, and read the decision back from the audit log.
#
#   bash test/e2e/kind.sh
#
# Needs docker, kind, kubectl, helm, curl and openssl. The cluster is deleted at the end
# unless ARBITER_KIND_KEEP=1. ARBITER_KIND_CLUSTER names it (default arbiter-e2e).
# (The test suite only syntax-checks this script: no Docker engine on CI machines.)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

CLUSTER=${ARBITER_KIND_CLUSTER:-arbiter-e2e}
NAMESPACE=arbiter-system
IMAGE_REPOSITORY=arbiter
IMAGE_TAG=e2e
LOCAL_PORT=${ARBITER_KIND_PORT:-18080}
WORK=$(mktemp -d)
PORT_FORWARD_PID=

log() { printf '\n== %s\n' "$*" >&2; }
die() { printf 'kind.sh: FAIL: %s\n' "$*" >&2; exit 1; }

for tool in docker kind kubectl helm curl openssl; do
  command -v "$tool" >/dev/null 2>&1 || die "$tool is required"
done

cleanup() {
  [[ -n $PORT_FORWARD_PID ]] && kill "$PORT_FORWARD_PID" 2>/dev/null || true
  rm -rf "$WORK"
  if [[ ${ARBITER_KIND_KEEP:-0} == 1 ]]; then
    log "keeping cluster $CLUSTER (kind delete cluster --name $CLUSTER)"
  else
    kind delete cluster --name "$CLUSTER" >/dev/null 2>&1 || true
  fi
}
trap cleanup EXIT

log "kind cluster $CLUSTER"
kind get clusters 2>/dev/null | grep -qx "$CLUSTER" || kind create cluster --name "$CLUSTER" --wait 180s
kubectl config use-context "kind-$CLUSTER" >/dev/null

log "image $IMAGE_REPOSITORY:$IMAGE_TAG"
docker build -t "$IMAGE_REPOSITORY:$IMAGE_TAG" .
kind load docker-image "$IMAGE_REPOSITORY:$IMAGE_TAG" --name "$CLUSTER"

kubectl create namespace "$NAMESPACE" --dry-run=client -o yaml | kubectl apply -f -

log "Redis (append-only file, fsync on every write: docs/audit-redis.md)"
kubectl -n "$NAMESPACE" apply -f - <<'EOF'
apiVersion: apps/v1
kind: Deployment
metadata: {name: redis}
spec:
  replicas: 1
  selector: {matchLabels: {app: redis}}
  template:
    metadata: {labels: {app: redis}}
    spec:
      containers:
        - name: redis
          image: redis:7-alpine
          args: [--appendonly, "yes", --appendfsync, always, --maxmemory-policy, noeviction]
          ports: [{containerPort: 6379}]
          readinessProbe: {exec: {command: [redis-cli, ping]}, periodSeconds: 2}
---
apiVersion: v1
kind: Service
metadata: {name: redis}
spec:
  selector: {app: redis}
  ports: [{port: 6379}]
EOF
kubectl -n "$NAMESPACE" rollout status deployment/redis --timeout=180s

log "Secrets: the Redis URL and API keys (only their SHA-256 is stored)"
AGENT_KEY=$(openssl rand -hex 24)
AUDITOR_KEY=$(openssl rand -hex 24)
sha() { printf '%s' "$1" | openssl dgst -sha256 -r | cut -d' ' -f1; }
cat >"$WORK/api-keys.yaml" <<EOF
keys:
  - name: agent-001
    sha256: $(sha "$AGENT_KEY")
    scopes: [governance:propose, governance:read]
    actors: [agent-001]
  - name: auditor
    sha256: $(sha "$AUDITOR_KEY")
    scopes: [audit:read, governance:read]
EOF
kubectl -n "$NAMESPACE" create secret generic arbiter-api-keys \
  --from-file=api-keys.yaml="$WORK/api-keys.yaml" --dry-run=client -o yaml | kubectl apply -f -
kubectl -n "$NAMESPACE" create secret generic arbiter-redis \
  --from-literal=url="redis://redis.$NAMESPACE.svc:6379/0" --dry-run=client -o yaml | kubectl apply -f -

log "helm install (2 replicas, audit to Redis)"
helm upgrade --install arbiter charts/arbiter --namespace "$NAMESPACE" \
  --set image.repository="$IMAGE_REPOSITORY" \
  --set image.tag="$IMAGE_TAG" \
  --set image.pullPolicy=Never \
  --set apiKeys.existingSecret=arbiter-api-keys \
  --set redis.existingSecret=arbiter-redis \
  --set podAntiAffinity=none \
  --wait --timeout 300s
kubectl -n "$NAMESPACE" rollout status deployment/arbiter --timeout=180s

log "configuration as custom resources (examples/manifests)"
kubectl apply -f examples/manifests/
for capability in database-query database-write deploy-production payments-transfer email-send; do
  kubectl wait --for=condition=Ready "capability/$capability" --timeout=60s
done
kubectl wait --for=condition=Ready actorgrant/agent-001 --timeout=60s
kubectl get arbiter

log "propose through the Service"
kubectl -n "$NAMESPACE" port-forward svc/arbiter "$LOCAL_PORT:8080" >"$WORK/port-forward.log" 2>&1 &
PORT_FORWARD_PID=$!
BASE=http://127.0.0.1:$LOCAL_PORT
for _ in $(seq 1 50); do
  curl -fsS "$BASE/readyz" >/dev/null 2>&1 && break
  sleep 0.2
done
curl -fsS "$BASE/readyz" >/dev/null || die "the API is not ready through the port-forward"

DECISION=$(curl -fsS -H "Authorization: Bearer $AGENT_KEY" -H 'Content-Type: application/json' \
  "$BASE/api/v1/governance/propose" \
  -d '{"actor":{"id":"agent-001","type":"ai-agent"},"action":{"capability":"database.query","parameters":{"query":"select 1"}}}')
echo "$DECISION"
grep -q '"outcome":"ALLOW"' <<<"$DECISION" || die "expected ALLOW, got: $DECISION"
DECISION_ID=$(sed -E 's/.*"decision_id":"([^"]+)".*/\1/' <<<"$DECISION")

log "read the audit log (entries live in Redis, shared by both replicas)"
TRAIL=$(curl -fsS -H "Authorization: Bearer $AUDITOR_KEY" "$BASE/api/v1/audit/log/$DECISION_ID")
echo "$TRAIL"
grep -q '"chain_verified":true' <<<"$TRAIL" || die "the decision's audit entry is not chain-verified"
VERIFY=$(curl -fsS -H "Authorization: Bearer $AUDITOR_KEY" "$BASE/api/v1/audit/verify")
echo "$VERIFY"
grep -q '"ok":true' <<<"$VERIFY" || die "the audit chain does not verify"
kubectl -n "$NAMESPACE" exec deploy/redis -- redis-cli --scan --count 1000 | head -n 20

log "PASS"
