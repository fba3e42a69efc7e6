// A command's flags and positionals read by node:util parseArgs; an unknown or malformed flag is a
// UsageError naming the command.
import { type ParseArgsConfig, parseArgs } from "node:util";
import { UsageError } from "./usage-error.ts";

export type Options = NonNullable<ParseArgsConfig["options"]>;

export function parse<O extends Options>(args: string[], options: O, command: string) {
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError(`${command}: ${error instanceof Error ? error.message : String(error)}`);
  }
}
