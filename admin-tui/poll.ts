// Loads data from the gateway now and every few seconds; keeps the last good data while the
// gateway is away and reports the failure, so screens keep showing something and recover. One
// call at a time: a slow gateway is not sent a pile of calls, and an unmounted screen's call is
// cancelled (its answer, if it still comes, changes nothing).
import { useCallback, useEffect, useRef, useState } from "react";

export interface Polled<T> {
  data: T | undefined;
  error: string | undefined;
  /** Loads again now, or once the call in flight has settled (several asks make one call). */
  reload: () => void;
}

export function usePoll<T>(load: (signal: AbortSignal) => Promise<T>, everyMs = 2000): Polled<T> {
  const [data, setData] = useState<T>();
  const [error, setError] = useState<string>();
  const loadRef = useRef(load);
  loadRef.current = load;
  const ask = useRef(() => {});
  useEffect(() => {
    const controller = new AbortController();
    const { signal } = controller;
    let pending = false;
    let again = false;
    const call = () => {
      if (signal.aborted) return;
      pending = true;
      again = false;
      loadRef
        .current(signal)
        .then(
          (value) => {
            if (signal.aborted) return;
            setData(value);
            setError(undefined);
          },
          (failure: unknown) => {
            if (!signal.aborted) setError(message(failure));
          },
        )
        .finally(() => {
          pending = false;
          if (again) call();
        });
    };
    ask.current = () => {
      if (pending) again = true;
      else call();
    };
    call();
    // A tick while a call is in flight is skipped, not queued: the next tick asks again.
    const timer = setInterval(() => {
      if (!pending) call();
    }, everyMs);
    return () => {
      clearInterval(timer);
      controller.abort();
      ask.current = () => {};
    };
  }, [everyMs]);
  const reload = useCallback(() => ask.current(), []);
  return { data, error, reload };
}

export function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
