import { ArbiterError, type ActorType, type RiskLevel } from '../model/index.js';

export interface RiskWeights {
  /** Base score by the capability's risk level; an unknown capability uses `critical`. */
  riskLevel: Record<RiskLevel, number>;
  /** Added for the proposing actor's type. */
  actorType: Record<ActorType, number>;
  /** Added when context.metadata.environment is "production". */
  productionEnvironment: number;
}

export interface EngineSettings {
  /** A risk score strictly above this turns ALLOW and REQUIRE_CONFIRMATION into ESCALATE. */
  riskThreshold: number;
  /** Outcome when no policy rule matches (semantics.md step 5: ALLOW, a server may choose DENY). */
  defaultOutcome: 'ALLOW' | 'DENY';
  riskWeights: RiskWeights;
}

/** The defaults of semantics.md, step 4. */
export const DEFAULT_ENGINE_SETTINGS: Readonly<EngineSettings> = Object.freeze({
  riskThreshold: 0.8,
  defaultOutcome: 'ALLOW',
  riskWeights: Object.freeze({
    riskLevel: Object.freeze({ low: 0.1, medium: 0.3, high: 0.6, critical: 0.85 }),
    actorType: Object.freeze({ human: -0.05, automation: 0, 'ai-copilot': 0.05, 'ai-agent': 0.1 }),
    productionEnvironment: 0.1,
  }),
});

export interface EngineSettingsOverrides {
  riskThreshold?: number;
  defaultOutcome?: 'ALLOW' | 'DENY';
  riskWeights?: {
    riskLevel?: Partial<Record<RiskLevel, number>>;
    actorType?: Partial<Record<ActorType, number>>;
    productionEnvironment?: number;
  };
}

/** `{...defaults, ...overrides}` one level deeper for the weights; never mutates its input. */
export function resolveEngineSettings(overrides: EngineSettingsOverrides = {}): EngineSettings {
  const d = DEFAULT_ENGINE_SETTINGS;
  const settings: EngineSettings = {
    riskThreshold: overrides.riskThreshold ?? d.riskThreshold,
    defaultOutcome: overrides.defaultOutcome ?? d.defaultOutcome,
    riskWeights: {
      riskLevel: { ...d.riskWeights.riskLevel, ...overrides.riskWeights?.riskLevel },
      actorType: { ...d.riskWeights.actorType, ...overrides.riskWeights?.actorType },
      productionEnvironment:
        overrides.riskWeights?.productionEnvironment ?? d.riskWeights.productionEnvironment,
    },
  };
  const numbers = [
    settings.riskThreshold,
    settings.riskWeights.productionEnvironment,
    ...Object.values(settings.riskWeights.riskLevel),
    ...Object.values(settings.riskWeights.actorType),
  ];
  if (!numbers.every(Number.isFinite))
    throw new ArbiterError('INTERNAL', 'engine settings: risk threshold and weights must be finite numbers');
  if (settings.defaultOutcome !== 'ALLOW' && settings.defaultOutcome !== 'DENY')
    throw new ArbiterError('INTERNAL', 'engine settings: defaultOutcome must be ALLOW or DENY');
  return settings;
}
