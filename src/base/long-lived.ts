// Long-lived responses that are no request in flight: the admin event stream an open console
// tails. A drain ends them at its start, so SIGTERM does not wait out the shutdown deadline for
// a feed that never finishes on its own (the console reconnects to another node or says so).

export class LongLived {
  #closers = new Set<() => void>();
  #closed = false;

  /** Registers how to end one response; returns its removal. After a drain began it ends at once. */
  add(close: () => void): () => void {
    if (this.#closed) {
      close();
      return () => {};
    }
    this.#closers.add(close);
    return () => this.#closers.delete(close);
  }

  /** Ends every registered response, and any registered later. */
  closeAll(): void {
    this.#closed = true;
    for (const close of [...this.#closers]) close();
    this.#closers.clear();
  }

  get size(): number {
    return this.#closers.size;
  }
}
