import type { Trail } from '../api/types.js';
import { DataTable } from './data-table.js';
import { OutcomeBadge } from './outcome-badge.js';

function Check({ label, result }: { label: string; result: string }) {
  const state = result === 'pass' ? 'pass' : result === 'skipped' ? 'skipped' : 'fail';
  return (
    <li class={`stage stage-${state}`}>
      <strong>{label}:</strong> <span>{result.replace(/_/g, ' ')}</span>
    </li>
  );
}

/** Each stage of the engine's evaluation, in the order it ran (semantics.md's pipeline). */
export function EvaluationStages({ evaluation }: { evaluation: Trail['evaluation'] }) {
  const decided = evaluation.rule_matched;
  const above = evaluation.risk_score >= evaluation.risk_threshold;
  return (
    <>
      <ol class="stages">
        <Check label="Capability check" result={evaluation.capability_check} />
        <Check label="Authority check" result={evaluation.authority_check} />
        <li class="stage">
          <strong>Policies evaluated:</strong> {evaluation.policies_evaluated.join(', ') || 'none'}
        </li>
        <li class="stage">
          <strong>Deciding rule:</strong>{' '}
          {decided ? (
            <>
              {decided.policy} rule {decided.rule_index} → <OutcomeBadge outcome={decided.outcome} />
            </>
          ) : (
            'none'
          )}
        </li>
        <li class={`stage ${above ? 'stage-fail' : 'stage-pass'}`}>
          <strong>Risk:</strong> {evaluation.risk_score.toFixed(2)} {above ? '≥' : '<'} threshold{' '}
          {evaluation.risk_threshold.toFixed(2)}{' '}
          <meter
            min={0}
            max={1}
            value={evaluation.risk_score}
            high={evaluation.risk_threshold}
            aria-label="Risk score"
          />
          {evaluation.risk_override && ' — the risk score escalated the decision past the rules'}
        </li>
        {evaluation.shadow_decision && (
          <li class="stage">
            <strong>Not enforced:</strong> {evaluation.shadow_decision.policy} (
            {evaluation.shadow_decision.enforcement} mode) would have decided{' '}
            <OutcomeBadge outcome={evaluation.shadow_decision.outcome} />
          </li>
        )}
      </ol>
      <DataTable
        caption="Every rule of the capability"
        columns={['Policy', 'Rule', 'Priority', 'Outcome', 'Matched', 'Condition error']}
      >
        {evaluation.rules.map((r) => (
          <tr key={`${r.policy}/${r.rule_index}`}>
            <td>
              {r.policy}
              {r.enforcement && <span class="muted"> ({r.enforcement} mode)</span>}
            </td>
            <td class="number">{r.rule_index}</td>
            <td class="number">{r.priority}</td>
            <td>
              <OutcomeBadge outcome={r.outcome} />
            </td>
            <td>{r.matched ? 'matched' : 'not matched'}</td>
            <td>{r.error ?? '—'}</td>
          </tr>
        ))}
      </DataTable>
      {evaluation.rules.length === 0 && <p class="empty">No policy has a rule for this capability.</p>}
    </>
  );
}
