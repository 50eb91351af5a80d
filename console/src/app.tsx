import { useCallback, useEffect, useMemo, useState } from 'preact/hooks';
import { apiClient, ApiError } from './api/client.js';
import type { Scope, Whoami } from './api/types.js';
import { hrefOf, useRoute, type Route, type ViewName } from './route.js';
import { forgetCredential, storeCredential, storedCredential } from './session.js';
import { SessionContext, sessionOf } from './session-context.js';
import { AuditLogView } from './views/audit-log.js';
import { ConfigurationView } from './views/configuration.js';
import { DecisionDetailView } from './views/decision-detail.js';
import { DecisionsView } from './views/decisions.js';
import { IntegrityView } from './views/integrity.js';
import { PendingView } from './views/pending.js';
import { SignInView } from './views/sign-in.js';

/** The views in menu order, with the scope each needs: a view the credential cannot use is not offered. */
const VIEWS: { name: ViewName; title: string; scope: Scope }[] = [
  { name: 'pending', title: 'Pending reviews', scope: 'governance:read' },
  { name: 'decisions', title: 'Decisions', scope: 'governance:read' },
  { name: 'audit', title: 'Audit log', scope: 'audit:read' },
  { name: 'configuration', title: 'Configuration', scope: 'governance:read' },
  { name: 'integrity', title: 'Integrity', scope: 'audit:read' },
];

function describe(err: unknown): string {
  if (err instanceof ApiError && err.status === 401) return 'That key or token is not valid.';
  return err instanceof ApiError
    ? `${err.code}: ${err.message}`
    : `The server cannot be reached: ${String(err)}`;
}

/** Signs in with the credential (whoami) and keeps it for this tab; signs out on a 401. */
function useSignIn() {
  const [credential, setCredential] = useState(storedCredential());
  const [me, setMe] = useState<Whoami | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const signOut = useCallback((why: string | null = null) => {
    forgetCredential();
    setCredential(null);
    setMe(null);
    setProblem(why);
  }, []);
  const client = useMemo(
    () =>
      credential && apiClient(credential, () => signOut('Signed out: the credential is no longer accepted.')),
    [credential, signOut],
  );
  useEffect(() => {
    if (client) client.get<Whoami>('auth/whoami').then(setMe, (err) => signOut(describe(err)));
  }, [client, signOut]);
  const signIn = async (candidate: string) => {
    try {
      setMe(await apiClient(candidate, () => undefined).get<Whoami>('auth/whoami'));
      storeCredential(candidate);
      setCredential(candidate);
      setProblem(null);
    } catch (err) {
      setProblem(describe(err));
    }
  };
  const session = useMemo(() => (client && me ? sessionOf(client, me) : null), [client, me]);
  return { session, signIn, signOut, problem, pending: credential !== null && me === null };
}

function CurrentView({ route }: { route: Route | undefined }) {
  switch (route?.view) {
    case 'pending':
      return <PendingView />;
    case 'decisions':
      return route.decisionId ? <DecisionDetailView decisionId={route.decisionId} /> : <DecisionsView />;
    case 'audit':
      return <AuditLogView />;
    case 'configuration':
      return <ConfigurationView />;
    case 'integrity':
      return <IntegrityView />;
    default:
      return (
        <p class="notice error">
          This credential holds no scope the console can use (it needs governance:read or audit:read).
        </p>
      );
  }
}

export function App() {
  const { session, signIn, signOut, problem, pending } = useSignIn();
  const route = useRoute();
  if (pending) return <p aria-busy="true">Signing in…</p>;
  if (!session) return <SignInView onSignIn={signIn} problem={problem} />;
  const allowed = VIEWS.filter((v) => session.can(v.scope));
  const current =
    route && allowed.some((v) => v.name === route.view) ? route : allowed[0] && { view: allowed[0].name };
  return (
    <SessionContext.Provider value={session}>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <strong class="brand">Arbiter</strong>
        <nav aria-label="Views">
          {allowed.map((v) => (
            <a
              key={v.name}
              href={hrefOf({ view: v.name })}
              aria-current={current?.view === v.name ? 'page' : undefined}
            >
              {v.title}
            </a>
          ))}
        </nav>
        <span class="who" title={session.me.scopes.join(', ')}>
          {session.me.principal}
        </span>
        <button type="button" class="secondary" onClick={() => signOut()}>
          Sign out
        </button>
      </header>
      <main id="main" tabIndex={-1}>
        <CurrentView route={current} />
      </main>
    </SessionContext.Provider>
  );
}
