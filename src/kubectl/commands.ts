import { networkReason, type ArbiterClient } from './arbiter-client.js';
import { entryNamespace } from '../audit/entry-namespace.js';
import type { CommandShape, Invocation, RecordScope } from './arguments.js';
import { auditEventLine } from './audit-event-line.js';
import { renderDecisionSummary, type DecisionSummary } from './decision-summary.js';
import { serverSentEvents } from './event-stream.js';
import { pendingTable, type DecisionView } from './pending-table.js';
import { PluginError } from './plugin-error.js';
import { reviewResultText, type ReviewResult } from './review-result.js';
import { ServerRefusal } from './server-refusal.js';
import { renderTrail, type DecisionTrail } from './trail-view.js';
import { verifyReportLine, type VerifyReportView } from './verify-report.js';

/** What a command runs with; main.ts builds it. */
export interface CommandContext {
  client: ArbiterClient;
  invocation: Invocation<PluginCommand>;
  /** stdout: the command's result. */
  print(text: string): void;
  /** stderr: notes around the result, so stdout stays parseable. */
  note(text: string): void;
  now(): Date;
  /** Aborts on Ctrl-C (SIGINT) or SIGTERM; only commands that run until stopped ask for it. */
  untilInterrupted(): AbortSignal;
}

export interface PluginCommand extends CommandShape {
  usage: string;
  summary: string;
  /** Resolves with the exit status. */
  run(context: CommandContext): Promise<number>;
}

/** The commands, in the order --help lists them; arguments.ts dispatches on the same list. */
export const COMMANDS: readonly PluginCommand[] = [
  {
    words: ['pending'],
    takesDecisionId: false,
    ownFlags: ['namespace', 'all-namespaces'],
    usage: 'pending [-n NAMESPACE | -A] [-o json]',
    summary: 'the decisions waiting for review, oldest first',
    run: runPending,
  },
  {
    words: ['get'],
    takesDecisionId: true,
    ownFlags: [],
    usage: 'get ID [-o json]',
    summary: "a decision's trail: request, evaluation, reviews, execution, integrity",
    run: runGet,
  },
  {
    words: ['approve'],
    takesDecisionId: true,
    ownFlags: ['comment'],
    usage: 'approve ID [--comment TEXT]',
    summary: 'approve a pending decision (prints a confirmation token once)',
    run: (context) => runReview(context, 'approve'),
  },
  {
    words: ['deny'],
    takesDecisionId: true,
    ownFlags: ['comment'],
    usage: 'deny ID [--comment TEXT]',
    summary: 'deny a pending decision',
    run: (context) => runReview(context, 'deny'),
  },
  {
    words: ['audit', 'tail'],
    takesDecisionId: false,
    ownFlags: ['event-type', 'namespace', 'all-namespaces'],
    usage: 'audit tail [--event-type TYPE] [-n NAMESPACE | -A] [-o json]',
    summary: 'print audit entries as they are appended, until interrupted',
    run: runAuditTail,
  },
  {
    words: ['verify'],
    takesDecisionId: false,
    ownFlags: [],
    usage: 'verify [-o json]',
    summary: "verify the server's whole audit chain (exit 1 when it is broken)",
    run: runVerify,
  },
];

const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;
const decisionPath = (context: CommandContext) =>
  `/governance/decisions/${encodeURIComponent(context.invocation.decisionId)}`;

async function runPending(context: CommandContext): Promise<number> {
  const { records } = context.invocation;
  const decisions = await allPending(context.client, records.namespace);
  if (context.invocation.output === 'json') {
    context.print(json({ decisions, total: decisions.length }));
    return 0;
  }
  if (decisions.length === 0) {
    context.note('no decisions are waiting for review\n');
    return 0;
  }
  context.print(pendingTable(decisions, context.now(), records.all));
  return 0;
}

/** A record of `namespace` (null: a cluster actor's) is shown unless -n names another. */
function inScope(records: RecordScope, namespace: string | null | undefined): boolean {
  return records.namespace === undefined || namespace === records.namespace;
}

/** The namespace of a streamed entry; null for none, or when it is no entry. */
function entryNamespaceOf(data: string): string | null {
  try {
    const entry = JSON.parse(data) as Record<string, unknown>;
    const text = (key: string) => {
      const value = entry[key];
      return typeof value === 'string' ? value : undefined;
    };
    return entryNamespace({
      actor_id: text('actor_id'),
      event_type: text('event_type'),
      namespace: text('namespace'),
    });
  } catch {
    return null;
  }
}

/**
 * Every page of GET /governance/pending (oldest first), so the table is never cut short;
 * of one namespace's actors when `namespace` is set (the server filters).
 */
async function allPending(client: ArbiterClient, namespace: string | undefined): Promise<DecisionView[]> {
  const decisions: DecisionView[] = [];
  const only = namespace === undefined ? '' : `&namespace=${encodeURIComponent(namespace)}`;
  let cursor: string | null = null;
  do {
    const query: string = only + (cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`);
    const page = await client.get<PendingPage>(`/governance/pending?limit=200${query}`);
    decisions.push(...page.decisions);
    cursor = page.cursor ?? null;
  } while (cursor !== null);
  return decisions;
}

interface PendingPage {
  decisions: DecisionView[];
  total: number;
  cursor?: string | null;
}

/** The trail needs audit:read, which reviewers often lack: then the decision itself (governance:read). */
async function runGet(context: CommandContext): Promise<number> {
  const id = encodeURIComponent(context.invocation.decisionId);
  let trail: DecisionTrail;
  try {
    trail = await context.client.get<DecisionTrail>(`/audit/log/${id}`);
  } catch (err) {
    if (!(err instanceof ServerRefusal && err.status === 403)) throw err;
    context.note(`note: ${err.message}; showing the decision without its trail\n`);
    const decision = await context.client.get<DecisionSummary>(decisionPath(context));
    context.print(
      context.invocation.output === 'json' ? json(decision) : renderDecisionSummary(decision, context.now()),
    );
    return 0;
  }
  context.print(context.invocation.output === 'json' ? json(trail) : renderTrail(trail, context.now()));
  return 0;
}

async function runReview(context: CommandContext, action: 'approve' | 'deny'): Promise<number> {
  const { comment, output } = context.invocation;
  const result = await context.client.post<ReviewResult>(
    `${decisionPath(context)}/${action}`,
    comment === undefined ? {} : { comment },
  );
  context.print(output === 'json' ? json(result) : reviewResultText(result));
  return 0;
}

/** Runs until interrupted (exit 0); the server ending the stream is an error (exit 1). */
async function runAuditTail(context: CommandContext): Promise<number> {
  const { eventType, output, records } = context.invocation;
  const interrupted = context.untilInterrupted();
  const query = eventType === undefined ? '' : `?event_type=${encodeURIComponent(eventType)}`;
  try {
    const stream = await context.client.eventStream(`/audit/events${query}`, interrupted);
    // Arbiter subscribes before it answers: whatever is appended from now on will be printed.
    context.note('following the audit log (Ctrl-C to stop)\n');
    for await (const event of serverSentEvents(stream)) {
      if (!inScope(records, entryNamespaceOf(event.data))) continue;
      context.print(`${output === 'json' ? event.data : auditEventLine(event.data, records.all)}\n`);
    }
  } catch (err) {
    if (interrupted.aborted) return 0;
    if (err instanceof PluginError) throw err;
    throw new PluginError(`the audit event stream broke: ${networkReason(err)}`, 1, { cause: err });
  }
  if (interrupted.aborted) return 0;
  throw new PluginError('the server ended the audit event stream (is it shutting down?)');
}

async function runVerify(context: CommandContext): Promise<number> {
  const report = await context.client.get<VerifyReportView>('/audit/verify');
  context.print(context.invocation.output === 'json' ? json(report) : verifyReportLine(report));
  return report.ok ? 0 : 1;
}

/** Usage and summary, one command a line, in columns. */
function commandTable(commands: readonly PluginCommand[]): string {
  const width = Math.max(...commands.map((c) => c.usage.length)) + 2;
  return commands.map((c) => `  ${c.usage.padEnd(width)}${c.summary}`).join('\n');
}

/** `kubectl arbiter audit`: the commands of a group, made from the same list that dispatches. */
export function groupHelp(group: readonly string[]): string {
  const members = COMMANDS.filter((c) => group.every((word, i) => c.words[i] === word));
  return `Usage: kubectl arbiter ${group.join(' ')} <command> [flags]

Commands:
${commandTable(members)}

The flags every command takes: kubectl arbiter --help.
`;
}

/** `kubectl arbiter --help`, made from the same list that dispatches. */
export function pluginHelp(): string {
  const commands = commandTable(COMMANDS);
  return `Usage: kubectl arbiter <command> [flags]

Review Arbiter's pending decisions and follow its audit log.

Commands:
${commands}

Records (pending, audit tail):
  -n, --namespace NS  only the records of that namespace's actors (team-a/bot)
  -A, --all-namespaces
                      all records, with their namespace (a NAMESPACE column)
                      without either: all records, cluster actors' and every namespace's
                      (as far as your credential may read them), without the column
Reaching Arbiter:
  --server URL        Arbiter's URL (e.g. http://localhost:8080); without it, the plugin
                      finds the Service labelled app.kubernetes.io/name=arbiter in the
                      namespace and port-forwards to one of its pods through the API server
  --arbiter-namespace NS
                      where to look for the Service (default: the kubeconfig context's)
  --service NAME      this Service instead of the labelled one
  --kubeconfig FILE   default: $KUBECONFIG, else ~/.kube/config
  --context NAME      a kubeconfig context other than the current one
Authentication:
  --token TOKEN       the bearer token for Arbiter (an API key or a Kubernetes token);
                      default: $ARBITER_TOKEN, else the kubeconfig user's token
Output:
  -o, --output json   the server's JSON instead of text (audit tail: one entry a line)

Errors are one line on stderr. Exit status: 0 done, 1 failed (or verify found the
chain broken), 2 usage error. --version prints the plugin's version.
`;
}
