import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { ApiClient } from './api/client.js';
import type { Scope, Whoami } from './api/types.js';

/** Who is signed in, the client that calls as them, and what they may do. */
export interface Session {
  client: ApiClient;
  me: Whoami;
  can: (scope: Scope) => boolean;
}

export const SessionContext = createContext<Session | null>(null);

export function useSession(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error('useSession outside a signed-in console');
  return session;
}

export function sessionOf(client: ApiClient, me: Whoami): Session {
  return { client, me, can: (scope) => me.scopes.includes('admin') || me.scopes.includes(scope) };
}
