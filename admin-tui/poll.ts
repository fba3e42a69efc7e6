// Loads data from the gateway now and every few seconds; keeps the last good data while the
// gateway is away and reports the failure, so screens keep showing something and recover.
import { useCallback, useEffect, useRef, useState } from "react";

export interface Polled<T> {
  data: T | undefined;
  error: string | undefined;
  reload: () => void;
}

export function usePoll<T>(load: () => Promise<T>, everyMs = 2000): Polled<T> {
  const [data, setData] = useState<T>();
  const [error, setError] = useState<string>();
  const loadRef = useRef(load);
  loadRef.current = load;
  const reload = useCallback(() => {
    loadRef.current().then(
      (value) => {
        setData(value);
        setError(undefined);
      },
      (failure: unknown) => setError(failure instanceof Error ? failure.message : String(failure)),
    );
  }, []);
  useEffect(() => {
    reload();
    const timer = setInterval(reload, everyMs);
    return () => clearInterval(timer);
  }, [reload, everyMs]);
  return { data, error, reload };
}

export function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
