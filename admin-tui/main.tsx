// Starts the terminal UI full-screen against a gateway's admin API and resolves when it quits.
// The screens are laid out for the terminal's size, read again on every resize: the screen is
// cleared and drawn anew at the new size, so no row drawn for a wider terminal is left to wrap.
import { render, useStdout } from "ink";
import { useEffect, useState } from "react";
import type { AdminApi } from "./api.ts";
import { HttpAdminApi } from "./api.ts";
import { App } from "./app.tsx";
import { type FeedSource, HttpFeed } from "./feed.ts";

const CLEAR_SCREEN = "\x1b[2J\x1b[3J\x1b[H";

const sizeOf = (stdout: NodeJS.WriteStream) => ({ columns: stdout.columns || 80, rows: stdout.rows || 24 });

function Sized({ api, feed }: { api: AdminApi; feed: FeedSource }) {
  const { stdout } = useStdout();
  const [size, setSize] = useState(() => sizeOf(stdout));
  useEffect(() => {
    const resized = () => {
      stdout.write(CLEAR_SCREEN);
      setSize(sizeOf(stdout));
    };
    stdout.on("resize", resized);
    return () => {
      stdout.off("resize", resized);
    };
  }, [stdout]);
  return <App api={api} feed={feed} columns={size.columns} rows={size.rows} />;
}

export async function runTui(url: string, token: string): Promise<void> {
  const base = url.replace(/\/+$/, "");
  const instance = render(<Sized api={new HttpAdminApi(base, token)} feed={new HttpFeed(base, token)} />, {
    exitOnCtrlC: true,
  });
  await instance.waitUntilExit();
}
