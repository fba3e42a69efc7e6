// Turns valibot issues into messages that name the field path and say what to do.
import type * as v from "valibot";

type Issue = v.BaseIssue<unknown>;

/** The dotted path of an issue: `server.listen`, `messages[0].content`. */
export function issuePath(issue: Issue): string {
  let out = "";
  for (const item of issue.path ?? []) {
    const key = item.key;
    if (typeof key === "number") out += `[${key}]`;
    else out += out ? `.${String(key)}` : String(key);
  }
  return out;
}

/** One line per issue, each starting with the field path. */
export function describeIssue(issue: Issue): string {
  const path = issuePath(issue) || "(root)";
  if (issue.type === "strict_object" && issue.expected === "never") {
    return `${path}: unknown field; remove it or check its spelling`;
  }
  const message = issue.message.replace(/^Invalid (type|value|key|length): /, "");
  return `${path}: ${message}`;
}

export function describeIssues(issues: readonly Issue[]): string {
  return issues.map(describeIssue).join("; ");
}
