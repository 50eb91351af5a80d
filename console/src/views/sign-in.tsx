import { useState } from 'preact/hooks';

/** The credential form: an API key or a bearer token, checked against /auth/whoami. */
export function SignInView({
  onSignIn,
  problem,
}: {
  onSignIn: (credential: string) => Promise<void>;
  problem: string | null;
}) {
  const [credential, setCredential] = useState('');
  const [busy, setBusy] = useState(false);
  return (
    <main class="sign-in">
      <h1>Arbiter console</h1>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          setBusy(true);
          void onSignIn(credential.trim()).finally(() => setBusy(false));
        }}
      >
        <label>
          <span>API key or bearer token</span>
          <input
            name="credential"
            type="password"
            autocomplete="off"
            required
            value={credential}
            onInput={(e) => setCredential(e.currentTarget.value)}
          />
        </label>
        <p class="muted">Kept in this tab's session storage only, and sent to this server alone.</p>
        {problem && (
          <p class="notice error" role="alert">
            {problem}
          </p>
        )}
        <button type="submit" disabled={busy || credential.trim() === ''}>
          Sign in
        </button>
      </form>
    </main>
  );
}
