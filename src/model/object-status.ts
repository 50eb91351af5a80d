/** The Ready condition of a configuration object (mirrors the CRD status subresource). */
export const READY_REASONS = [
  'Accepted',
  'InvalidSchema',
  'InvalidCondition',
  'InvalidSpec',
  'Conflict',
  'UnknownCapability',
  'ForeignSubject',
] as const;
export type ReadyReason = (typeof READY_REASONS)[number];

export interface ObjectStatus {
  ready: boolean;
  reason: ReadyReason;
  message: string;
  observedGeneration?: number;
  /** The spec field the reason is about (e.g. `spec.rules[2].condition`), for tools that point at a line. */
  field?: string;
  /**
   * Set on a NamespacedPolicy or NamespacedActorGrant that names capabilities its namespace's
   * Delegation does not cover (the OutsideDelegation condition); the object stays in use.
   */
  outsideDelegation?: string;
}
