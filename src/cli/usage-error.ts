// The one error a command throws for what the operator typed: main.ts prints its message as is and
// exits with status 2. Kept alone so main.ts loads it without the store or the configuration.

/** A problem with what the operator typed: printed as is, exit status 2. */
export class UsageError extends Error {
  override name = "UsageError";
}
