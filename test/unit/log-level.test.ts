// The log level is settable (`server.log_level`, MODELGATE_LOG_LEVEL, --log-level): the config
// carries it, a bad value is refused naming the field, and lines below it are not written.
import { afterEach, expect, spyOn, test } from "bun:test";
import { log, setLogFormat, setLogLevel } from "../../src/base/log.ts";
import { ConfigError, loadConfig } from "../../src/config/load.ts";

afterEach(() => setLogLevel("info"));

test("info by default; the environment and the flag set it, the flag winning", () => {
  expect(loadConfig({ env: {}, flags: {} }).server.log_level).toBe("info");
  expect(loadConfig({ env: { MODELGATE_LOG_LEVEL: "debug" }, flags: {} }).server.log_level).toBe("debug");
  expect(loadConfig({ env: {}, flags: { "log-level": "warn" } }).server.log_level).toBe("warn");
});

test("an unknown level is refused naming the field and the choices", () => {
  let message = "";
  try {
    loadConfig({ env: { MODELGATE_LOG_LEVEL: "verbose" }, flags: {} });
  } catch (error) {
    if (error instanceof ConfigError) message = error.message;
  }
  expect(message).toContain("server.log_level");
  expect(message).toContain("expected debug, info, warn or error");
});

test("lines below the level are not written; at debug they are", () => {
  setLogFormat("json");
  const written: string[] = [];
  const spy = spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => {
    written.push(String(chunk));
    return true;
  });
  try {
    log("debug", "hidden at info");
    setLogLevel("debug");
    log("debug", "shown at debug");
    setLogLevel("error");
    log("warn", "hidden at error");
  } finally {
    spy.mockRestore();
  }
  expect(written.map((line) => JSON.parse(line).msg)).toEqual(["shown at debug"]);
});
