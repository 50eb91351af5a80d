import { useCallback, useEffect, useRef, useState } from 'preact/hooks';

export interface Fetched<T> {
  data: T | undefined;
  error: Error | undefined;
  loading: boolean;
  reload: () => void;
}

/**
 * Loads `load()` when the inputs change and on reload(); an answer to an older call that
 * arrives late is dropped, so the view never shows a stale result over a newer one.
 */
export function useFetch<T>(load: () => Promise<T>, inputs: readonly unknown[]): Fetched<T> {
  const [state, setState] = useState<{ data?: T; error?: Error; loading: boolean }>({ loading: true });
  const generation = useRef(0);
  const run = useCallback(load, inputs);
  const reload = useCallback(() => {
    const mine = ++generation.current;
    setState((s) => ({ ...s, loading: true }));
    run().then(
      (data) => mine === generation.current && setState({ data, loading: false }),
      (error: Error) => mine === generation.current && setState((s) => ({ ...s, error, loading: false })),
    );
  }, [run]);
  useEffect(reload, [reload]);
  return { data: state.data, error: state.error, loading: state.loading, reload };
}

/** The current time, refreshed every `everyMs` (countdowns and ages). */
export function useNow(everyMs = 1_000): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), everyMs);
    return () => clearInterval(timer);
  }, [everyMs]);
  return now;
}
