import { hash } from 'node:crypto';
import type { CallToolResult, Tool } from '@modelcontextprotocol/server';
import type { Logger } from 'pino';
import { canonicalJson } from '../audit/chain.js';
import type { DecisionRecorder } from '../governance/decision-recorder.js';
import type { InPathDecisions, InPathVerdict } from '../governance/in-path-decisions.js';
import type { IndexSnapshot } from '../index/index.js';
import type { Metrics } from '../metrics/index.js';
import type { NoteSigningKey } from '../audit/note/note-keys.js';
import type { ActorType, Observations, Proposal } from '../model/index.js';
import { failureText } from './failure-text.js';
import { RECEIPT_META, signReceipt } from './receipt.js';
import { bounded, summariseToolResult } from './result-summary.js';
import { capabilityForTool } from './tool-capability.js';
import type { ToolPins } from './tool-pins.js';
import { passedOnMeta } from './upstream-meta.js';
import type { UpstreamSession } from './upstream-session.js';

/** The agent behind an MCP session: who authenticated, and the actor it acts as. */
export interface AgentSession {
  /** The principal's name (API key or Kubernetes identity), recorded as the proposer. */
  principal: string;
  actor: { id: string; type: ActorType };
  /**
   * The agent's session: the Mcp-Session-Id of a 2025-11-25 session with Arbiter, or the
   * correlation a 2026-07-28 call names (session-correlation.ts); absent when none.
   */
  sessionId?: string;
}

export interface GovernedToolCallsDeps {
  decisions: InPathDecisions;
  /** Records the executions of the calls it forwarded (DecisionService.recorder). */
  executions: Pick<DecisionRecorder, 'appendExecution' | 'scrubbedText' | 'recorded'>;
  /** Signs a receipt for every forwarded call (--audit-signing-key); without it, none is sent. */
  receiptKey?: NoteSigningKey;
  clock: () => Date;
  index: { current(): IndexSnapshot };
  metrics: Metrics;
  logger: Logger;
  /** Hides and refuses tools whose definition is not the pinned one. */
  pins: ToolPins;
}

/** Who the execution entries of the tool proxy name as reporter. */
export const TOOL_PROXY_REPORTER = 'tool-proxy';

/** _meta keys of a tool result that name Arbiter's decision (MCP's reverse-DNS prefix). */
export const DECISION_META = 'dev.arbiter/decision_id';
export const OUTCOME_META = 'dev.arbiter/outcome';

/**
 * Governs the tool calls of agents' MCP sessions: each call is proposed as capability
 * mcp.<server>.<tool> of the agent's actor, and forwarded upstream only when ALLOWed; what
 * the upstream then did is recorded as the decision's execution, measured here.
 */
export class GovernedToolCalls {
  constructor(private readonly deps: GovernedToolCallsDeps) {}

  /** The upstream's tools the actor may call now: registered, granted, and as pinned. */
  async list(agent: AgentSession, upstream: UpstreamSession): Promise<Tool[]> {
    const snapshot = this.deps.index.current();
    const tools = await this.deps.pins.admitted(upstream.upstream.name, await upstream.listTools(), snapshot);
    return tools.filter((tool) => {
      const capability = capabilityForTool(upstream.upstream.name, tool.name);
      if (!capability || !snapshot.capability(capability)) return false;
      return snapshot
        .grantsFor(agent.actor.id, capability)
        .some((grant) => grant.actorType === undefined || grant.actorType === agent.actor.type);
    });
  }

  async call(
    agent: AgentSession,
    upstream: UpstreamSession,
    tool: string,
    args: Record<string, unknown>,
  ): Promise<CallToolResult> {
    const server = upstream.upstream.name;
    const capability = capabilityForTool(server, tool);
    if (!capability) {
      this.deps.metrics.mcpToolCalls.inc({ server, result: 'denied' });
      return toolError(`the tool name "${tool}" cannot be governed: its capability name would be too long`);
    }
    const proposal = proposalOf(agent, capability, args);
    const verdict = await this.decide(agent, proposal, upstream, tool);
    const meta = { [DECISION_META]: verdict.decisionId!, [OUTCOME_META]: verdict.outcome };
    if (verdict.outcome === 'DENY') {
      this.deps.metrics.mcpToolCalls.inc({ server, result: 'denied' });
      return toolError(
        `Arbiter denied this call: ${clause(verdict.reason)} (decision ${verdict.decisionId})`,
        meta,
      );
    }
    if (verdict.outcome !== 'ALLOW') {
      this.deps.metrics.mcpToolCalls.inc({ server, result: 'pending' });
      return toolError(
        `This call waits for review (${verdict.outcome}: ${clause(verdict.reason)}; decision ${verdict.decisionId}). ` +
          `Once a reviewer approves it, make the same call with the same arguments again before ${verdict.expiresAt}.`,
        meta,
      );
    }
    const decision = { actor_id: agent.actor.id, capability, decision_id: verdict.decisionId! };
    let receipt: Receipted;
    try {
      receipt = this.receiptOf(proposal, verdict);
    } catch (err) {
      // With a signing key every forwarded call carries a receipt: none, no forward (fail closed).
      this.deps.metrics.mcpToolCalls.inc({ server, result: 'error' });
      return toolError(`Arbiter could not sign a receipt for this call: ${failureText(err)}`, meta);
    }
    // A result may echo the arguments: its summary is recorded without their sensitive values.
    const scrub = (text: string) => this.deps.executions.scrubbedText(proposal, text);
    const result = await this.forward(upstream, tool, args, decision, scrub, receipt);
    return { ...result, _meta: { ...passedOnMeta(result._meta), ...meta } };
  }

  private async decide(
    agent: AgentSession,
    proposal: Proposal,
    upstream: UpstreamSession,
    tool: string,
  ): Promise<InPathVerdict> {
    const server = upstream.upstream.name;
    const args = proposal.action.parameters;
    const fingerprint = hash(
      'sha256',
      canonicalJson({ actor: agent.actor.id, arguments: args, server, tool }),
      'hex',
    );
    try {
      // A pinned tool is checked against the definition its upstream lists now.
      const capability = this.deps.index.current().capability(proposal.action.capability);
      const observed = await this.deps.pins.observation(upstream, capability, tool);
      return await this.deps.decisions.decide({
        proposal,
        principal: agent.principal,
        recorded: {
          mcp: { fingerprint, server, ...sessionOf(agent), tool, ...recordedDefinition(observed) },
        },
        dryRun: false,
        observed,
      });
    } catch (err) {
      // No recorded decision, no call: fail closed.
      this.deps.metrics.mcpToolCalls.inc({ server, result: 'error' });
      throw err;
    }
  }

  /**
   * The receipt of an allowed call, and whether the trail may show it: not when the call's
   * arguments hold a value the log masks, whose plain SHA-256 could be checked against guesses.
   */
  private receiptOf(proposal: Proposal, verdict: InPathVerdict): Receipted {
    const key = this.deps.receiptKey;
    if (!key) return undefined;
    const facts = {
      decision: verdict.decisionId!,
      audit: verdict.auditRef!,
      actor: proposal.actor.id,
      capability: proposal.action.capability,
      arguments: proposal.action.parameters,
      issued: this.deps.clock(),
    };
    const recordable = this.deps.executions.recorded(proposal) === proposal;
    return { note: signReceipt(facts, key), recordable };
  }

  /** Calls the upstream and records what happened as the decision's execution. */
  private async forward(
    upstream: UpstreamSession,
    tool: string,
    args: Record<string, unknown>,
    decision: { actor_id: string; capability: string; decision_id: string },
    scrub: (text: string) => string,
    receipt: Receipted,
  ): Promise<CallToolResult> {
    const server = upstream.upstream.name;
    const started = performance.now();
    let result: CallToolResult;
    let summary: string;
    try {
      result = await upstream.callTool(tool, args, receipt && { [RECEIPT_META]: receipt.note });
      summary = summariseToolResult(result);
    } catch (err) {
      const message = `the upstream MCP server "${server}" failed: ${failureText(err)}`;
      result = toolError(message);
      summary = bounded(message);
    }
    const seconds = (performance.now() - started) / 1000;
    const status = result.isError ? 'failed' : 'completed';
    this.deps.metrics.mcpUpstreamSeconds.observe({ server }, seconds);
    this.deps.metrics.mcpToolCalls.inc({ server, result: status });
    try {
      // The decision was just recorded as ALLOW in this call: executable, and not yet executed.
      await this.deps.executions.appendExecution(decision, {
        status,
        result_summary: scrub(summary),
        duration_ms: Math.round(seconds * 1000),
        completed_at: this.deps.clock().toISOString(),
        reporter: TOOL_PROXY_REPORTER,
        ...(receipt?.recordable ? { receipt: receipt.note } : {}),
      });
    } catch (err) {
      // The call has happened: the agent gets its result; the missing record is loud.
      this.deps.logger.error(
        { err, decision_id: decision.decision_id, server, tool, status },
        'the execution of a forwarded tool call could not be recorded',
      );
    }
    return result;
  }
}

/** A forwarded call's signed receipt, and whether its execution entry may hold it. */
type Receipted = { note: string; recordable: boolean } | undefined;

/** The proposal a tool call is made as. */
function proposalOf(agent: AgentSession, capability: string, args: Record<string, unknown>): Proposal {
  return {
    actor: agent.actor,
    action: { capability, parameters: args },
    ...(agent.sessionId === undefined ? {} : { context: sessionOf(agent) }),
  };
}

/** What the decision records of a pinned tool's observed definition (nothing when not pinned). */
function recordedDefinition(observed: Observations): { definition_digest?: string | null } {
  return observed.toolDefinitionDigest === undefined
    ? {}
    : { definition_digest: observed.toolDefinitionDigest };
}

function sessionOf(agent: AgentSession): { session_id?: string } {
  return agent.sessionId === undefined ? {} : { session_id: agent.sessionId };
}

/** A decision's reason as a clause inside a sentence: without its own final full stop. */
function clause(reason: string): string {
  return reason.endsWith('.') ? reason.slice(0, -1) : reason;
}

function toolError(text: string, meta?: Record<string, string>): CallToolResult {
  return { content: [{ type: 'text', text }], isError: true, ...(meta ? { _meta: meta } : {}) };
}
