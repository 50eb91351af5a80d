import { unreachableRules } from '../engine/index.js';
import { buildIndex, isRejected, validateConfigObject, type IndexSnapshot } from '../index/index.js';
import { kindKey, objectKey, type ConfigObject } from '../model/index.js';
import type { FileProblem, LocatedObject } from '../sources/located-manifests.js';

export type Severity = 'error' | 'warning';

/** One problem of a manifest set, where it stands. */
export interface Finding {
  severity: Severity;
  file: string;
  line: number;
  /** objectKey (`Kind/name`, `Kind/namespace/name`), or undefined for a file-level problem (YAML syntax). */
  object: string | undefined;
  message: string;
}

/**
 * Everything the index and the admission webhook check, on manifests at rest: the schema
 * (validateConfigObject), then each object's status in the index built from all of them
 * (CEL compilation, parameter schemas, time zones, duplicate capability names, identity
 * conflicts), plus what is legal but likely wrong: capabilities no file defines, rules that
 * can never decide. The same functions as the server: no check is written twice.
 */
export function manifestFindings(
  objects: readonly LocatedObject[],
  problems: readonly FileProblem[],
): Finding[] {
  return checkManifests(objects, problems).findings;
}

/** The findings, and the index the valid objects make (what `arbiter test` decides with). */
export function checkManifests(
  objects: readonly LocatedObject[],
  problems: readonly FileProblem[],
): { findings: Finding[]; snapshot: IndexSnapshot } {
  const findings: Finding[] = problems.map((p) => ({ severity: 'error', ...p, object: undefined }));
  const located = new Map<string, LocatedObject>();
  const valid: ConfigObject[] = [];
  for (const item of objects) {
    const checked = validateConfigObject(item.raw);
    if (!checked.ok) {
      for (const error of checked.errors)
        findings.push(at(item, nameOf(item.raw), 'error', error, fieldOfError(error)));
      continue;
    }
    const key = objectKey(checked.object);
    const first = located.get(key);
    if (first) {
      findings.push(at(item, key, 'error', `${key} is already defined at ${first.file}:${first.line}`));
      continue;
    }
    located.set(key, item);
    valid.push(checked.object);
  }
  const snapshot = buildIndex(valid);
  for (const { kind, name, namespace, status } of snapshot.statuses()) {
    const key = kindKey(kind, name, namespace);
    const item = located.get(key)!;
    // In use, but its namespace may not govern all it names (the webhook warns alike).
    if (status.outsideDelegation !== undefined)
      findings.push(at(item, key, 'warning', `OutsideDelegation: ${status.outsideDelegation}`));
    if (status.ready) continue;
    const severity = isRejected(status) ? 'error' : 'warning';
    findings.push(at(item, key, severity, `${status.reason}: ${status.message}`, status.field));
  }
  for (const rule of unreachableRules(snapshot)) {
    // A NamespacedPolicy's rule names it `namespace/name`, as its objectKey does.
    const key = `${rule.kind}/${rule.policy}`;
    const item = located.get(key)!;
    findings.push(at(item, key, 'warning', rule.message, `spec.rules[${rule.ruleIndex}]`));
  }
  return { findings: findings.sort(byPlace), snapshot };
}

/** `FILE:LINE: Kind/name: message`, warnings marked as such. */
export function formatFinding(finding: Finding): string {
  const object = finding.object ? `${finding.object}: ` : '';
  const warning = finding.severity === 'warning' ? 'warning: ' : '';
  return `${finding.file}:${finding.line}: ${object}${warning}${finding.message}`;
}

function at(
  item: LocatedObject,
  object: string,
  severity: Severity,
  message: string,
  field?: string,
): Finding {
  return { severity, file: item.file, line: item.lineOf(field), object, message };
}

/** validateConfigObject's errors start with the field: `spec.rules[0].outcome: must be ...`. */
function fieldOfError(error: string): string | undefined {
  const field = /^([A-Za-z_][\w.[\]]*):/.exec(error)?.[1];
  return field?.replace(/^object\./, '');
}

function nameOf(raw: unknown): string {
  const object = raw as { kind?: unknown; metadata?: { name?: unknown } } | null;
  const text = (value: unknown) => (typeof value === 'string' ? value : '?');
  return `${text(object?.kind)}/${text(object?.metadata?.name)}`;
}

function byPlace(a: Finding, b: Finding): number {
  return a.file < b.file ? -1 : a.file > b.file ? 1 : a.line - b.line;
}
