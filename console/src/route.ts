import { useEffect, useState } from 'preact/hooks';

/** The views, addressed by the URL fragment (#/pending, #/decisions/ID, ...). */
export type ViewName = 'pending' | 'decisions' | 'audit' | 'configuration' | 'integrity';

export interface Route {
  view: ViewName;
  /** The decision shown in detail, under #/decisions/ID. */
  decisionId?: string;
}

const VIEWS: readonly ViewName[] = ['pending', 'decisions', 'audit', 'configuration', 'integrity'];

export function parseRoute(hash: string): Route | undefined {
  const [view, id] = hash.replace(/^#\/?/, '').split('/');
  if (!VIEWS.includes(view as ViewName)) return undefined;
  return {
    view: view as ViewName,
    ...(view === 'decisions' && id ? { decisionId: decodeURIComponent(id) } : {}),
  };
}

export function hrefOf(route: Route): string {
  return `#/${route.view}${route.decisionId ? `/${encodeURIComponent(route.decisionId)}` : ''}`;
}

/** The route of the current fragment, following changes (links, back and forward). */
export function useRoute(): Route | undefined {
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  useEffect(() => {
    const follow = () => setRoute(parseRoute(location.hash));
    addEventListener('hashchange', follow);
    return () => removeEventListener('hashchange', follow);
  }, []);
  return route;
}
